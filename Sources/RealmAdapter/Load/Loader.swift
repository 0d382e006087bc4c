import Foundation
import Logging
import Metrics
import Synchronization

/// Seeds Realms from a database snapshot (`realm-adapter load`), with the same mapping engine
/// as the daemon, and hands off to the daemon exactly (ARCHITECTURE.md: The loader).
///
/// Tables are loaded in ``LoadPlan`` order, streamed (never held in memory), in Realm
/// transactions of `loader.batchSize` rows that carry the adapter's origin, so the daemon never
/// sends loaded rows back to the database. Reading and writing overlap: one thread reads and
/// maps rows while the caller's thread writes the previous batch.
///
/// **Re-runs.** A Realm that has no objects of a type when the type's load starts gets them
/// created; one that has some (an earlier load, an interrupted one, or a synced Realm) gets
/// each row merged (only changed values are written) and, at the end of the table, loses the
/// objects the snapshot does not have. So a re-run ends with the same contents as a first run.
///
/// **Hand-off.** When the snapshot is a hand-off point, each Realm records its position for
/// the connector's source, and the store records that the load finished; the daemon refuses
/// to start after an interrupted load.
public final class Loader: @unchecked Sendable {
    // @unchecked: used by one load at a time; the reading thread touches only immutable fields.
    public let store: RealmStore
    public let mapping: Mapping
    /// The daemon's adapter: loaded transactions carry its origin.
    public let adapter: Adapter
    /// The connector's source name (positions are recorded under it).
    public let source: String
    public let configuration: LoaderConfiguration
    let logger: Logger

    public init(
        store: RealmStore, mapping: Mapping, adapter: Adapter, source: String, configuration: LoaderConfiguration,
        logger: Logger
    ) {
        self.store = store
        self.mapping = mapping
        self.adapter = adapter
        self.source = source
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: Before and after

    /// The store metadata key under which a load from `source` records its state.
    public static func stateKey(source: String) -> String { "load:\(source)" }

    /// Throws if a load from `source` into this store started and did not finish: the Realms
    /// then hold part of a snapshot, and following the change stream would not complete them.
    public static func requireFinishedLoad(_ store: RealmStore, source: String) throws {
        guard let state = try unfinishedLoad(store, source: source) else { return }
        throw RealmAdapterError.loadIncomplete(source: source, state: state)
    }

    /// The state of a load from `source` that started and did not finish, if there is one.
    static func unfinishedLoad(_ store: RealmStore, source: String) throws -> String? {
        try store.metadata(stateKey(source: source)).flatMap { $0.hasPrefix("running") ? $0 : nil }
    }

    /// Throws if a followed Realm has transactions the database does not have yet: loading
    /// would overwrite them in the Realm while the daemon still sends them, and the two sides
    /// would end up different.
    ///
    /// Not after a load from the source that did not finish: the Realms then hold part of a
    /// snapshot, `run` refuses until a load has finished, and an app's write since would leave no
    /// way forward. The load merges, the hand-off keeps such writes pending (the database-order
    /// cursor stops before them), and the daemon sends them afterwards: the database's echo of
    /// each brings the Realm to what the database stored, as for an app's write during a load.
    public func requireNothingUnsent() throws {
        guard try Self.unfinishedLoad(store, source: source) == nil else { return }
        let unsent = try adapter.pendingCounts().map(\.path)
        guard unsent.isEmpty else {
            throw RealmAdapterError.unsentChanges(unsent)
        }
    }

    /// Which Realms of the store this mapping writes: the literal path, or those the template matches.
    func mappedPaths() throws -> [String] {
        try adapter.paths().filter { mapping.path.extract($0) != nil }
    }

    // MARK: Loading

    /// Loads the plan's tables from `snapshot`, reporting progress after every batch.
    /// The caller still calls `snapshot.finish()`.
    public func load(_ snapshot: LoadSnapshot, plan: LoadPlan, progress: (LoadProgress) -> Void = { _ in }) throws
        -> LoadSummary
    {
        let started = ContinuousClock.now
        let key = Self.stateKey(source: source)
        try store.setMetadata(key, "running since \(Timestamp(Date()).iso8601)")
        try store.resetLoadNotes(starting: true)
        let run = LoadRun(passing: [adapter.id, try adapter.databaseOrderCursor(logger: logger).id])
        var tables: [LoadSummary.Table] = []
        try store.withLinkIndexesDeferred { try loadSteps(plan, snapshot, run, &tables, progress) }
        try Failpoint.loadBeforeHandOff.hit()
        let position = snapshot.handOffPosition
        if let position { try recordHandOff(position) }
        try store.setMetadata(key, "done at \(position ?? "(no hand-off point)") \(Timestamp(Date()).iso8601)")
        try store.resetLoadNotes(starting: false)
        // In byte order, as the store lists them: its index of paths is that order already (sorting
        // 100,000 paths here took a sixteenth of such a load).
        let realms = try store.realmPaths().filter(run.written.contains)
        return LoadSummary(
            tables: tables, realms: realms, duration: ContinuousClock.now - started,
            handOffPosition: position)
    }

    /// Each step of the load in order (``load(_:plan:progress:)``).
    private func loadSteps(
        _ plan: LoadPlan, _ snapshot: LoadSnapshot, _ run: LoadRun, _ tables: inout [LoadSummary.Table],
        _ progress: (LoadProgress) -> Void
    ) throws {
        for step in plan.steps {
            let stepStarted = ContinuousClock.now
            var p = LoadProgress(
                step: step, rows: 0, estimatedRows: try snapshot.estimatedRows(step.table), elapsed: .zero, done: false)
            progress(p)
            // `realm_adapter_loader_rows_total{table}`: one series per mapped table.
            let loaded = Counter(label: "realm_adapter_loader_rows_total", dimensions: [("table", step.table)])
            func report(_ rows: Int) {
                if rows > p.rows { loaded.increment(by: rows - p.rows) }
                p.rows = rows
                p.elapsed = ContinuousClock.now - stepStarted
                progress(p)
            }
            var summary = LoadSummary.Table(table: step.table, what: step.what, rows: 0, deleted: 0, danglingLinks: 0)
            switch step {
            case .objects(let t, let deferring):
                try loadObjects(t, deferring: deferring, snapshot, run, &summary, report)
                summary.deleted = try sweepObjects(t, run)
            case .links(let t, let properties):
                try loadLinks(t, properties, snapshot, run, &summary, report)
            case .list(let t, let list):
                try loadList(t, list, snapshot, run, &summary, report)
                summary.deleted = try sweepLists(t, list, run)
            }
            p.done = true
            report(summary.rows)
            tables.append(summary)
        }
    }

    /// The store records the hand-off position (the daemon's stream starts after it), and in
    /// each mapped Realm the database-order cursor moves up to the first Realm write the database
    /// does not have (none was there when the load began, ``requireNothingUnsent()``; an app may
    /// have written during it): the snapshot holds everything before.
    ///
    /// The load's own transactions moved both cursors as they committed where nothing came
    /// between (``LoadRun/passing``): only the Realms where a cursor is still behind are left.
    func recordHandOff(_ position: String) throws {
        // For the whole store: the snapshot holds every transaction before it, for each Realm.
        try store.recordSourcePosition(SourcePosition(source: source, position: position), origin: adapter.origin)
        let cursor = try adapter.databaseOrderCursor(logger: logger)
        let behind = Set(try adapter.pathsBehind() + cursor.pathsBehind())
        let paths = behind.isEmpty ? [] : try mappedPaths().filter(behind.contains)
        guard !paths.isEmpty else { return }
        let unsent = Set(try adapter.pendingCounts().map(\.path))
        try cursor.advance(
            through: try paths.map { p in
                (p, try unsent.contains(p) ? adapter.pending(p, limit: 1).first.map { $0.version - 1 } ?? .max : .max)
            })
        try adapter.advancePastOwnTransactions(paths)  // past the load's own transactions, never past someone else's
    }

    /// One row to write: an object's values (or a list's targets) bound for a Realm.
    struct Entry {
        var path: String
        var identity: Value
        var values: PropertyValues
    }

    /// A batch's entries for one Realm: all of them (a literal path), or those at `positions`.
    struct EntriesOfPath: RandomAccessCollection {
        let batch: [Entry]
        let positions: [Int]?
        var startIndex: Int { 0 }
        var endIndex: Int { positions?.count ?? batch.count }
        subscript(i: Int) -> Entry { batch[positions?[i] ?? i] }
    }

    func loadObjects(
        _ t: TableMapping, deferring: [String], _ snapshot: LoadSnapshot, _ run: LoadRun,
        _ summary: inout LoadSummary.Table, _ report: (Int) -> Void
    ) throws {
        let layout = RowLayout(t.columns.map(\.column) + t.pathColumns, t)
        let skipping = Set(deferring)
        let mapping = self.mapping
        let order = routeOrder(t)
        let hasLinks = t.columns.contains {
            if case .link = $0.kind { !skipping.contains($0.property.name) } else { false }
        }
        let batchSize = configuration.batchSize
        // Rows are prepared for the store on the reading thread where they can be (ObjectBatch);
        // the writer decides per Realm whether it merges, and tells the reader.
        let decisions = MergeDecisions(existing: Set(try store.realmPaths()))
        let schema = mapping.schema
        // Links are prepared where the column holds the target's primary key and the target is
        // loaded first (a database key needs a lookup, a deferred link a second pass).
        let preparing =
            PreparedInserts.canPrepare(t.type) && !t.rowsGiveLists && deferring.isEmpty
            && mapping.linksByDatabaseKey[t.type.name] == nil
        let empty = {
            ObjectBatch(preparing: preparing ? t.type : nil, schema: schema, capacity: batchSize, decisions: decisions)
        }
        // Where the row alone gives the identity (no join or database key), the connector hands
        // fields straight to the prepared INSERTs (FieldReceiver).
        if preparing && t.compoundKey == nil && t.databaseKey == nil {
            return try pipeline(
                empty: empty,
                produce: { add in
                    try withoutActuallyEscaping(add) { add in
                        let receiver = try FieldReceiver(t, columns: layout.columns, mapping: mapping) { path, row in
                            try add { try $0.add(path, row) }
                        }
                        try snapshot.rows(t.table, columns: layout.columns, orderedBy: order, into: receiver)
                    }
                },
                consume: { batch in try writeObjects(batch, t, hasLinks: hasLinks, decisions, run, &summary, report) })
        }
        try pipeline(
            empty: empty,
            produce: { add in
                // RealmIds generated for rows without one go back to the database, a batch at a time.
                var assignments: [RealmIdAssignment] = []
                // One buffer for every row's values: a row kept as an entry takes it along (and the next row gets a new one).
                var values = PropertyValues()
                try snapshot.rows(t.table, columns: layout.columns, orderedBy: order) { columns in
                    try layout.read(columns) { row in
                        var identity: Value?
                        if let dk = t.databaseKey {
                            let (id, assignment) = try mapping.databaseIdentity(row, t, dk)
                            identity = id
                            if let assignment { assignments.append(assignment) }
                            if assignments.count >= batchSize {
                                try snapshot.writeRealmIds(assignments)
                                assignments.removeAll(keepingCapacity: true)
                            }
                        }
                        let id = try mapping.object(row, t, skipping: skipping, identity: identity, into: &values)
                        let path = try mapping.route(row, t)
                        try add { try $0.add(path, id, values) }
                    }
                }
                try snapshot.writeRealmIds(assignments)
            }, consume: { batch in try writeObjects(batch, t, hasLinks: hasLinks, decisions, run, &summary, report) })
    }

    /// Writes a batch of a type's rows (``loadObjects``).
    func writeObjects(
        _ batch: ObjectBatch, _ t: TableMapping, hasLinks: Bool, _ decisions: MergeDecisions, _ run: LoadRun,
        _ summary: inout LoadSummary.Table, _ report: (Int) -> Void
    ) throws {
        let type = t.type.name
        try write(paths: batch.paths, batch.entries, run) { path, entries, tx in
            // A Realm at version 0 has nothing to merge with; one the reader took for new (it did not
            // exist when the load began) may have been created since, by an app.
            let merge = try run.merges(type, path) { try tx.baseVersion > 0 && tx.count(type) > 0 }
            decisions.decide(path, merges: merge)
            // One row: merged (only what changed is written) or inserted as is (the mapping gave the
            // identity its key type already).
            func row(_ identity: Value, _ values: PropertyValues) throws {
                var values = values
                if hasLinks { summary.danglingLinks += try checkLinks(&values, of: identity, t, tx) }
                if merge {
                    try tx.noteLoaded(type, identity)
                    try tx.upsert(type, identity, values)
                } else {
                    try tx.record(.insert(objectType: type, identity: identity, values: values))
                }
            }
            if let p = batch.prepared[path] {
                if !merge, try tx.insert(p, known: run.known) { return }
                // The Realm's type grew meanwhile, a link's target is missing, or an app created the
                // Realm the reader took for new: one by one, from the prepared rows where the reader
                // kept no entries (it keeps none once the writer has decided).
                if entries.isEmpty { return try p.forEachRow(row) }
            }
            for e in entries { try row(e.identity, e.values) }
        }
        run.written.formUnion(batch.paths)
        summary.rows += batch.count
        report(summary.rows)
    }

    /// The order rows of a routed table are read in: by the columns that route them, so each
    /// Realm's rows come together and a batch writes to as few Realms as it can (read in the
    /// table's order, a batch of rows of thousands of users would write one transaction each).
    func routeOrder(_ t: TableMapping) -> [String] { mapping.path.isLiteral ? [] : mapping.path.fields }

    /// The second pass over a table: its links into types loaded after it (or into itself).
    func loadLinks(
        _ t: TableMapping, _ properties: [String], _ snapshot: LoadSnapshot, _ run: LoadRun,
        _ summary: inout LoadSummary.Table, _ report: (Int) -> Void
    ) throws {
        let wanted = Set(properties)
        let linkColumns = t.columns.filter { wanted.contains($0.property.name) }.map(\.column)
        let layout = RowLayout(
            t.keyColumns + (t.databaseKey.map { [$0.column] } ?? []) + linkColumns
                + t.pathColumns.filter { !linkColumns.contains($0) }, t)
        let mapping = self.mapping
        try pipeline(
            produce: { emit in
                try snapshot.rows(t.table, columns: layout.columns, orderedBy: routeOrder(t)) { columns in
                    try layout.read(columns) { row in
                        let given = try t.databaseKey.map { try mapping.databaseIdentity(row, t, $0).0 }
                        var (identity, values) = try mapping.object(row, t, identity: given)
                        values = PropertyValues(values.filter { wanted.contains($0.name) })
                        try emit(Entry(path: try mapping.route(row, t), identity: identity, values: values))
                    }
                }
            },
            consume: { batch in
                try write(batch, run) { _, entries, tx in
                    for e in entries {
                        var values = e.values
                        summary.danglingLinks += try checkLinks(&values, of: e.identity, t, tx)
                        try tx.update(t.type.name, e.identity, values)
                    }
                }
                summary.rows += batch.count
                report(summary.rows)
            })
    }

    /// A list of links from its link table, read in (owner, index) order: one entry per owner.
    func loadList(
        _ t: TableMapping, _ list: LinkListMapping, _ snapshot: LoadSnapshot, _ run: LoadRun,
        _ summary: inout LoadSummary.Table, _ report: (Int) -> Void
    ) throws {
        let type = t.type.name
        let property = list.property.name
        let kind = "\(type).\(property)"
        let mapping = self.mapping
        let fields = mapping.path.fields
        let dangling = configuration.danglingForeignKeys
        let targetKey = mapping.table(forType: list.target)?.databaseKey
        var rows = 0
        try pipeline(
            produce: { emit in
                // One entry per owner: its targets in order, bound for the owner's Realm.
                var current: (owner: Value, path: String?, targets: [Value])?
                func flush() throws {
                    guard let c = current else { return }
                    if let path = c.path {
                        try emit(Entry(path: path, identity: c.owner, values: [property: .list(c.targets)]))
                    } else if dangling == .error {
                        throw self.danglingError(
                            list.table, LinkListMapping.ownerColumn, key: nil, refersTo: type, c.owner)
                    }
                }
                // A key of the wrong kind is an error naming the link table and column; a NULL one
                // refers to nothing (``danglingForeignKeys`` decides).
                func key(_ value: Value, _ type: ScalarType, _ column: String) throws -> Value {
                    guard !value.isNull else { return .null }
                    do { return try value.coerced(to: type, optional: false) } catch let e as RealmAdapterError {
                        throw e.located(
                            "Table \(list.table), column \(column)", ["db.table": list.table, "db.column": column])
                    }
                }
                try snapshot.linkRows(list, owner: t, ownerColumns: fields) { values in
                    let o = try key(values[0], list.ownerKeyType, LinkListMapping.ownerColumn)
                    let v = try key(values[1], list.targetKeyType, LinkListMapping.targetColumn)
                    if let c = current, c.owner == o {
                        current!.targets.append(v)
                        return
                    }
                    try flush()
                    var path: String? = o.isNull ? nil : mapping.path.template
                    if !fields.isEmpty, !o.isNull {
                        // The owner's columns choose its Realm; none means the owner row is missing.
                        let ownerRow = DatabaseRow(Dictionary(uniqueKeysWithValues: zip(fields, values[2...])))
                        path =
                            fields.allSatisfy({ !(ownerRow[$0]?.isNull ?? true) })
                            ? try mapping.route(ownerRow, t) : nil
                    }
                    current = (o, path, [v])
                }
                try flush()
            },
            consume: { batch in
                try write(batch, run) { path, entries, tx in
                    let merge = run.merged(type, path)
                    // Lists hold the same targets again and again: each is looked up once, and
                    // owners the load found already (links to them) are not looked up again.
                    var owners = run.known.take(type)
                    var found = list.target == type ? nil : run.known.take(list.target)
                    defer {
                        run.known.put(type, owners)
                        if let found { run.known.put(list.target, found) }
                    }
                    func known(_ v: Value) -> Bool { found?.contains(v) ?? owners.contains(v) }
                    func note(_ v: Value) {
                        if found != nil { found!.insert(v) } else { owners.insert(v) }
                    }
                    // Owners new in this load have empty lists: appended all at once, their
                    // targets found here already.
                    var appends: [RealmWriter.ListAppend] = []
                    for e in entries {
                        guard case .list(let targets)? = e.values[property] else { continue }
                        rows += targets.count
                        // Link tables hold database keys where types have them: the objects that have them.
                        let owner =
                            try t.databaseKey.map { try tx.identity(of: type, where: $0.property, equals: e.identity) }
                            ?? e.identity
                        guard let owner, !owner.isNull, try owners.contains(owner) || tx.exists(type, owner) else {
                            guard configuration.danglingForeignKeys == .nullify else {
                                throw danglingError(
                                    list.table, LinkListMapping.ownerColumn, key: nil, refersTo: type, e.identity)
                            }
                            summary.danglingLinks += targets.count
                            continue
                        }
                        owners.insert(owner)
                        var kept: [Value] = []
                        for v in targets {
                            if let dk = targetKey {
                                if let id = try tx.identity(of: list.target, where: dk.property, equals: v) {
                                    kept.append(id)
                                    continue
                                }
                            } else if try !v.isNull && (known(v) || tx.exists(list.target, v)) {
                                note(v)
                                kept.append(v)
                                continue
                            }
                            guard configuration.danglingForeignKeys == .nullify else {
                                throw danglingError(
                                    list.table, LinkListMapping.targetColumn, key: e.identity, refersTo: list.target, v)
                            }
                            summary.danglingLinks += 1
                        }
                        if merge {
                            // An owner whose rows came apart (its key spelled two ways in the link
                            // table, sorting apart) gets the later ones appended, as a new owner does.
                            if try tx.noteLoaded(kind, owner) {
                                try tx.replaceList(type, owner, property, with: kept)
                            } else {
                                try tx.listAppend(type, owner, property, contentsOf: kept)
                            }
                        } else {
                            appends.append(.init(owner: owner, items: kept))
                        }
                    }
                    try tx.appendToLists(type, property, appends, targetsChecked: true)
                }
                summary.rows = rows
                report(rows)
            })
    }
}
