import Foundation
import Logging
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

    public init(store: RealmStore, mapping: Mapping, adapter: Adapter, source: String, configuration: LoaderConfiguration, logger: Logger) {
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
        guard let state = try store.metadata(stateKey(source: source)), state.hasPrefix("running") else { return }
        throw RealmAdapterError(.loadIncomplete, "A load into this store did not finish (\(state)). Run `realm-adapter load` again to complete it, then start the daemon.",
                                context: ["source": source])
    }

    /// Throws if a followed Realm has transactions the database does not have yet: loading
    /// would overwrite them in the Realm while the daemon still sends them, and the two sides
    /// would end up different.
    public func requireNothingUnsent() throws {
        let unsent = try adapter.pendingCounts().map(\.path)
        guard unsent.isEmpty else {
            throw RealmAdapterError(.invalidState, "These Realms have changes the database does not have yet: \(unsent.prefix(10).joined(separator: ", "))\(unsent.count > 10 ? ", …" : ""). Run `realm-adapter run` until `realm-adapter status` shows no lag (if it shows one blocked, move it aside with `realm-adapter dead-letter`), then load again.")
        }
    }

    /// Which Realms of the store this mapping writes: the literal path, or those the template matches.
    func mappedPaths() throws -> [String] {
        try adapter.paths().filter { mapping.path.extract($0) != nil }
    }

    // MARK: Loading

    /// Loads the plan's tables from `snapshot`, reporting progress after every batch.
    /// The caller still calls `snapshot.finish()`.
    public func load(_ snapshot: LoadSnapshot, plan: LoadPlan, progress: (LoadProgress) -> Void = { _ in }) throws -> LoadSummary {
        let started = ContinuousClock.now
        let key = Self.stateKey(source: source)
        try store.setMetadata(key, "running since \(Timestamp(Date()).iso8601)")
        try store.resetLoadNotes(starting: true)
        let run = LoadRun()
        var tables: [LoadSummary.Table] = []
        for step in plan.steps {
            let stepStarted = ContinuousClock.now
            var p = LoadProgress(step: step, rows: 0, estimatedRows: try snapshot.estimatedRows(step.table), elapsed: .zero, done: false)
            progress(p)
            func report(_ rows: Int) {
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
        try Failpoint.loadBeforeHandOff.hit()
        let position = snapshot.handOffPosition
        if let position { try recordHandOff(position) }
        try store.setMetadata(key, "done at \(position ?? "(no hand-off point)") \(Timestamp(Date()).iso8601)")
        try store.resetLoadNotes(starting: false)
        // In byte order, as the store lists them (and without comparing 100,000 paths as Unicode).
        let realms = run.written.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return LoadSummary(tables: tables, realms: realms, duration: ContinuousClock.now - started,
                           handOffPosition: position)
    }

    /// Each mapped Realm records the hand-off position (the daemon's stream starts after it),
    /// and the database-order cursor moves up to the first Realm write the database does not
    /// have (none was there when the load began, ``requireNothingUnsent()``; an app may have
    /// written during it): the snapshot holds everything before.
    func recordHandOff(_ position: String) throws {
        let paths = try mappedPaths()
        guard !paths.isEmpty else { return }
        try store.recordSourcePosition(SourcePosition(source: source, position: position), in: paths)
        let cursor = try adapter.databaseOrderCursor(logger: logger)
        let unsent = Set(try adapter.pendingCounts().map(\.path))
        try cursor.advance(through: try paths.map { p in
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

    private func loadObjects(_ t: TableMapping, deferring: [String], _ snapshot: LoadSnapshot, _ run: LoadRun,
                             _ summary: inout LoadSummary.Table, _ report: (Int) -> Void) throws {
        let layout = RowLayout(t.columns.map(\.column) + t.pathColumns, t)
        let skipping = Set(deferring), mapping = self.mapping, order = routeOrder(t)
        let hasLinks = t.columns.contains { if case .link = $0.kind { !skipping.contains($0.property.name) } else { false } }
        let batchSize = configuration.batchSize
        // Rows are prepared for the store on the reading thread where they can be (ObjectBatch);
        // the writer decides per Realm whether it merges, and tells the reader.
        let decisions = MergeDecisions(existing: Set(try store.realmPaths())), schema = mapping.schema
        let preparing = PreparedInserts.canPrepare(t.type)
        let empty = { ObjectBatch(preparing: preparing ? t.type : nil, schema: schema, capacity: batchSize, decisions: decisions) }
        // Where the row alone gives the identity (no join or database key), the connector hands
        // fields straight to the prepared INSERTs (FieldReceiver).
        if preparing && t.compoundKey == nil && t.databaseKey == nil {
            return try pipeline(empty: empty, produce: { add in
                try withoutActuallyEscaping(add) { add in
                    let receiver = try FieldReceiver(t, columns: layout.columns, mapping: mapping) { path, row in try add { try $0.add(path, row) } }
                    try snapshot.rows(t.table, columns: layout.columns, orderedBy: order, into: receiver)
                }
            }, consume: { batch in try writeObjects(batch, t, hasLinks: false, decisions, run, &summary, report) })
        }
        try pipeline(empty: empty, produce: { add in
            // RealmIds generated for rows without one go back to the database, a batch at a time.
            var assignments: [RealmIdAssignment] = []
            // One buffer for every row's values: a row kept as an entry takes it along (and the next row gets a new one).
            var values = PropertyValues()
            try snapshot.rows(t.table, columns: layout.columns, orderedBy: order) { columns in try layout.read(columns) { row in
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
            } }
            try snapshot.writeRealmIds(assignments)
        }, consume: { batch in try writeObjects(batch, t, hasLinks: hasLinks, decisions, run, &summary, report) })
    }

    /// Writes a batch of a type's rows (``loadObjects``).
    private func writeObjects(_ batch: ObjectBatch, _ t: TableMapping, hasLinks: Bool, _ decisions: MergeDecisions, _ run: LoadRun,
                              _ summary: inout LoadSummary.Table, _ report: (Int) -> Void) throws {
        let type = t.type.name
        try write(paths: batch.paths, batch.entries) { path, entries, tx in
            // A Realm new since the load began (the reader decided so) or at version 0: nothing to merge with.
            let merge = try run.merges(type, path) { try decisions.merges(path) != false && tx.baseVersion > 0 && tx.count(type) > 0 }
            decisions.decide(path, merges: merge)
            if !merge, let p = batch.prepared[path] {
                if try tx.insert(p) { return }
                // The Realm's type grew meanwhile: one by one, from the prepared rows
                // (entries are not kept once the writer has decided).
                if entries.isEmpty {
                    try p.forEachRow { id, values in try tx.record(.insert(objectType: type, identity: id, values: values)) }
                    return
                }
            }
            for e in entries {
                var values = e.values
                if hasLinks { summary.danglingLinks += try checkLinks(&values, of: e.identity, t, tx) }
                if merge {
                    try tx.noteLoaded(type, e.identity)
                    try tx.upsert(type, e.identity, values)
                } else {
                    // The mapping gave the identity its key type already: INSERT as is.
                    try tx.record(.insert(objectType: type, identity: e.identity, values: values))
                }
            }
        }
        run.written.formUnion(batch.paths)
        summary.rows += batch.count
        report(summary.rows)
    }

    /// The order rows of a routed table are read in: by the columns that route them, so each
    /// Realm's rows come together and a batch writes to as few Realms as it can (read in the
    /// table's order, a batch of rows of thousands of users would write one transaction each).
    private func routeOrder(_ t: TableMapping) -> [String] { mapping.path.isLiteral ? [] : mapping.path.fields }

    /// The second pass over a table: its links into types loaded after it (or into itself).
    private func loadLinks(_ t: TableMapping, _ properties: [String], _ snapshot: LoadSnapshot, _ run: LoadRun,
                           _ summary: inout LoadSummary.Table, _ report: (Int) -> Void) throws {
        let wanted = Set(properties)
        let linkColumns = t.columns.filter { wanted.contains($0.property.name) }.map(\.column)
        let layout = RowLayout(t.keyColumns + (t.databaseKey.map { [$0.column] } ?? []) + linkColumns + t.pathColumns.filter { !linkColumns.contains($0) }, t)
        let mapping = self.mapping
        try pipeline(produce: { emit in
            try snapshot.rows(t.table, columns: layout.columns, orderedBy: routeOrder(t)) { columns in try layout.read(columns) { row in
                let given = try t.databaseKey.map { try mapping.databaseIdentity(row, t, $0).0 }
                var (identity, values) = try mapping.object(row, t, identity: given)
                values = PropertyValues(values.filter { wanted.contains($0.name) })
                try emit(Entry(path: try mapping.route(row, t), identity: identity, values: values))
            } }
        }, consume: { batch in
            try write(batch) { _, entries, tx in
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
    private func loadList(_ t: TableMapping, _ list: LinkListMapping, _ snapshot: LoadSnapshot, _ run: LoadRun,
                          _ summary: inout LoadSummary.Table, _ report: (Int) -> Void) throws {
        let type = t.type.name, property = list.property.name, kind = "\(type).\(property)"
        let mapping = self.mapping, fields = mapping.path.fields, dangling = configuration.danglingForeignKeys
        var rows = 0
        try pipeline(produce: { emit in
            // One entry per owner: its targets in order, bound for the owner's Realm.
            var current: (owner: Value, path: String?, targets: [Value])?
            func flush() throws {
                guard let c = current else { return }
                if let path = c.path {
                    try emit(Entry(path: path, identity: c.owner, values: [property: .list(c.targets)]))
                } else if dangling == .error {
                    throw self.danglingError(list.table, LinkListMapping.ownerColumn, key: nil, refersTo: type, c.owner)
                }
            }
            try snapshot.linkRows(list, owner: t, ownerColumns: fields) { values in
                let o = try values[0].coerced(to: list.ownerKeyType, optional: false)
                let v = try values[1].coerced(to: list.targetKeyType, optional: false)
                if let c = current, c.owner == o {
                    current!.targets.append(v)
                    return
                }
                try flush()
                var path: String? = mapping.path.template
                if !fields.isEmpty {
                    // The owner's columns choose its Realm; none means the owner row is missing.
                    let ownerRow = DatabaseRow(Dictionary(uniqueKeysWithValues: zip(fields, values[2...])))
                    path = fields.allSatisfy({ !(ownerRow[$0]?.isNull ?? true) }) ? try mapping.route(ownerRow, t) : nil
                }
                current = (o, path, [v])
            }
            try flush()
        }, consume: { batch in
            try write(batch) { path, entries, tx in
                let merge = run.merged(type, path)
                for e in entries {
                    guard case .list(let targets)? = e.values[property] else { continue }
                    rows += targets.count
                    // Link tables hold database keys where types have them: the objects that have them.
                    let owner = try t.databaseKey.map { try tx.identity(of: type, where: $0.property, equals: e.identity) } ?? e.identity
                    guard let owner, try tx.exists(type, owner) else {
                        guard configuration.danglingForeignKeys == .nullify else {
                            throw danglingError(list.table, LinkListMapping.ownerColumn, key: nil, refersTo: type, e.identity)
                        }
                        summary.danglingLinks += targets.count
                        continue
                    }
                    let targetKey = mapping.table(forType: list.target)?.databaseKey
                    var kept: [Value] = []
                    for v in targets {
                        if let dk = targetKey {
                            if let id = try tx.identity(of: list.target, where: dk.property, equals: v) { kept.append(id); continue }
                        } else if try tx.exists(list.target, v) {
                            kept.append(v)
                            continue
                        }
                        guard configuration.danglingForeignKeys == .nullify else {
                            throw danglingError(list.table, LinkListMapping.targetColumn, key: e.identity, refersTo: list.target, v)
                        }
                        summary.danglingLinks += 1
                    }
                    if merge { try tx.noteLoaded(kind, owner) }
                    try tx.replaceList(type, owner, property, with: kept)
                }
            }
            summary.rows = rows
            report(rows)
        })
    }

    // MARK: Removing what the snapshot does not have

    /// Deletes, from Realms that had objects of the type before, those the load did not write.
    private func sweepObjects(_ t: TableMapping, _ run: LoadRun) throws -> Int {
        let type = t.type.name
        let deleted = try sweep(type, run) { tx, after, limit in
            tx.schema[type: type] == nil ? (0, nil) : try tx.deleteNotLoaded(type, after: after, limit: limit)
        }
        if deleted > 0 { logger.info("Deleted objects the database no longer has", metadata: ["type": "\(type)", "count": "\(deleted)"]) }
        return deleted
    }

    /// Empties, in Realms that had objects of the owner type before, the lists the load did not write.
    private func sweepLists(_ t: TableMapping, _ list: LinkListMapping, _ run: LoadRun) throws -> Int {
        let type = t.type.name, property = list.property.name
        return try sweep(type, run) { tx, after, limit in
            tx.schema[type: type]?[property: property] == nil ? (0, nil) : try tx.clearListsNotLoaded(type, property, after: after, limit: limit)
        }
    }

    /// In each Realm that had objects of `type` before the load, runs `step` (remove up to
    /// `limit` things after a key; say how many and the last key) in transactions of
    /// `loader.batchSize` until nothing is left. Returns how many it removed.
    private func sweep(_ type: String, _ run: LoadRun,
                       _ step: (inout WriteTransaction, _ after: Value?, _ limit: Int) throws -> (Int, Value?)) throws -> Int {
        let limit = configuration.batchSize
        var removed = 0
        for path in try mappedPaths() where !run.fresh(type, path) {
            var after: Value?
            while true {
                let (n, last) = try store.write(to: path, origin: adapter.origin) { tx in try step(&tx, after, limit) }.result
                removed += n
                guard let last, n == limit else { break }
                after = last
            }
        }
        return removed
    }

    // MARK: Writing

    /// Writes a batch as one store transaction (one Realm transaction per Realm it touches):
    /// `body` runs once per Realm with the batch's entries for it, in order.
    private func write(_ batch: [Entry], _ body: (String, EntriesOfPath, inout WriteTransaction) throws -> Void) throws {
        try write(paths: mapping.path.isLiteral ? [mapping.path.template] : Self.paths(of: batch), batch, body)
    }

    /// The Realms `entries` are for, in the order they first come.
    static func paths(of entries: [Entry]) -> [String] {
        var seen = Set<String>(), paths: [String] = []
        for e in entries where seen.insert(e.path).inserted { paths.append(e.path) }
        return paths
    }

    /// The same for the Realms at `paths` (some may have no entries).
    private func write(paths: [String], _ batch: [Entry], _ body: (String, EntriesOfPath, inout WriteTransaction) throws -> Void) throws {
        var byPath: [String: [Int]] = [:]
        if !mapping.path.isLiteral {
            for (i, e) in batch.enumerated() { byPath[e.path, default: []].append(i) }
        }
        let schema = mapping.schema
        try store.write(toEach: paths, origin: adapter.origin) { path, tx in
            try tx.adopt(schema)
            try body(path, EntriesOfPath(batch: batch, positions: mapping.path.isLiteral ? nil : byPath[path] ?? []), &tx)
        }
        try Failpoint.loadAfterBatch.hit()
    }

    /// Checks that every link of `values` finds its target in the Realm; a missing target is an
    /// error naming table, column and key, or (`danglingForeignKeys: nullify`) a null link.
    /// Returns how many links it set to null.
    private func checkLinks(_ values: inout PropertyValues, of identity: Value, _ t: TableMapping, _ tx: WriteTransaction) throws -> Int {
        var nulled = 0
        let keyLinks = mapping.linksByDatabaseKey[t.type.name]
        for (i, e) in values.enumerated() {
            guard !e.value.isNull, let c = t.column(forProperty: e.name), case .link(let target, _) = c.kind else { continue }
            if let tt = keyLinks?[e.name] {
                // A database key: the target is the object that has it.
                if let id = try tx.identity(of: target, where: mapping.tables[tt].databaseKey!.property, equals: e.value) {
                    values.setValue(id, at: i)
                    continue
                }
            } else if try tx.exists(target, e.value) {
                continue
            }
            guard configuration.danglingForeignKeys == .nullify else {
                throw danglingError(t.table, c.column, key: identity, refersTo: target, e.value)
            }
            values.setValue(.null, at: i)
            nulled += 1
        }
        return nulled
    }

    private func danglingError(_ table: String, _ column: String, key: Value?, refersTo target: String, _ value: Value) -> RealmAdapterError {
        RealmAdapterError(.danglingForeignKey,
                          "Table \(table), column \(column)\(key.map { ", row with key \(Mapping.keyText($0))" } ?? ""): the foreign key refers to a \(target) with key \(Mapping.keyText(value)), which the Realm does not have (the row is missing from the database, or its table was left out of --tables). Fix the row, or set loader.danglingForeignKeys to \"nullify\" to load it with a null link.",
                          context: ["db.table": table, "db.column": column])
    }

    /// Runs `produce` on a thread of its own, in batches of `loader.batchSize`, while this
    /// thread runs `consume` on each batch; at most two batches wait in between.
    private func pipeline(produce: (_ emit: (Entry) throws -> Void) throws -> Void, consume: ([Entry]) throws -> Void) throws {
        let size = configuration.batchSize
        try pipeline(empty: { var b: [Entry] = []; b.reserveCapacity(size); return b }, produce: { add in
            try withoutActuallyEscaping(add) { add in try produce { e in try add { $0.append(e) } } }
        }, consume: consume)
    }

    /// The same with batches of any form: `produce` adds each row to the batch being filled
    /// with `add` (on the reading thread); a batch of `loader.batchSize` rows goes to `consume`.
    private func pipeline<Batch>(empty: @escaping () throws -> Batch, produce: (_ add: ((inout Batch) throws -> Void) throws -> Void) throws -> Void,
                                 consume: (Batch) throws -> Void) throws {
        let queue = BoundedQueue<Batch>(capacity: 2)
        let size = configuration.batchSize
        let done = DispatchSemaphore(value: 0)
        try withoutActuallyEscaping(produce) { produce in
            // The thread gets `produce` through a box it empties: the Thread object may keep its
            // block (and what the block holds) a little after the work is done, and `produce`
            // must be gone by the end of `withoutActuallyEscaping` (a runtime check, seen to fail).
            let producer = Handoff(produce), batches = UncheckedBox(empty)
            let thread = Thread {
                Self.produceBatches(producer.take(), empty: batches.value, size: size, into: queue)
                done.signal()
            }
            thread.stackSize = 4 << 20
            thread.start()
            defer { done.wait() }
            do {
                while let batch = try queue.take() {
                    try consume(batch)
                    // Freeing a batch (and the values its transaction shares with it) is real
                    // work: leave it to another thread, so that this one goes on writing. The
                    // batch is handed over, not copied, so that the last release is not here.
                    Self.dispose(consume batch)
                }
            } catch {
                queue.cancel()
                throw error
            }
        }
    }

    /// The reading thread's part of ``pipeline(empty:produce:consume:)``.
    private static func produceBatches<Batch>(_ produce: (_ add: ((inout Batch) throws -> Void) throws -> Void) throws -> Void,
                                              empty: @escaping () throws -> Batch, size: Int, into queue: BoundedQueue<Batch>) {
        do {
            var batch = try empty()
            var rows = 0
            try produce { add in
                try add(&batch)
                rows += 1
                if rows == size {
                    try queue.put(batch)
                    batch = try empty()
                    rows = 0
                }
            }
            if rows > 0 { try queue.put(batch) }
            queue.finish()
        } catch {
            queue.finish(error)
        }
    }
}

extension Loader {
    static let disposal = DispatchQueue(label: "realm-adapter.load.disposal")

    /// Frees `value` on the disposal queue.
    static func dispose<T>(_ value: consuming T) {
        let box = UncheckedBox(value)
        disposal.async { withExtendedLifetime(box) {} }
    }
}

private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// A value handed to another thread once: ``take()`` leaves nothing behind in the box.
private final class Handoff<T>: @unchecked Sendable {
    // @unchecked: written before the thread starts, taken once by that thread.
    private var value: T?
    init(_ value: T) { self.value = value }
    func take() -> T {
        defer { value = nil }
        return value!
    }
}

/// Where each type's load found its Realms: empty of that type (objects are created) or not
/// (rows are merged, and objects the load did not write are removed at the end).
final class LoadRun {
    private var mode: [String: [String: Bool]] = [:]
    var written = Set<String>()

    /// Whether rows of `type` are merged into the Realm at `path`; decided at the first batch.
    func merges(_ type: String, _ path: String, _ hasObjects: () throws -> Bool) throws -> Bool {
        if let m = mode[type]?[path] { return m }
        let m = try hasObjects()
        mode[type, default: [:]][path] = m
        return m
    }

    func merged(_ type: String, _ path: String) -> Bool { mode[type]?[path] ?? true }
    func fresh(_ type: String, _ path: String) -> Bool { mode[type]?[path] == false }
}

/// Which requested column each of a table's mapped columns is.
final class RowLayout: Sendable {
    let columns: [String]
    /// Per `TableMapping.columns` index: the position in `columns`, or nil if not requested.
    let positions: [Int?]

    init(_ columns: [String], _ t: TableMapping) {
        var unique: [String] = []
        for c in columns where !unique.contains(c) { unique.append(c) }
        self.columns = unique
        positions = t.columns.map { c in unique.firstIndex(of: c.column) }
    }
}

/// A row of a snapshot, positional. It borrows the row's values (``RowLayout/read(_:_:)``):
/// reading one per column costs no reference counting.
struct LoadedRow: ColumnValues {
    let values: UnsafeBufferPointer<Value>
    let positions: UnsafeBufferPointer<Int?>
    unowned(unsafe) let layout: RowLayout

    func value(column: String) -> Value? { layout.columns.firstIndex(of: column).map { values[$0] } }
    func value(at index: Int, of t: TableMapping) -> Value? {
        guard let p = positions[index] else { return nil }
        return values[p]
    }
}

extension RowLayout {
    /// Runs `body` with `values`, a row read in this layout, as a ``LoadedRow`` valid during the call.
    func read<T>(_ values: [Value], _ body: (LoadedRow) throws -> T) rethrows -> T {
        try values.withUnsafeBufferPointer { v in
            try positions.withUnsafeBufferPointer { p in try body(LoadedRow(values: v, positions: p, layout: self)) }
        }
    }
}

extension LoadPlan.Step {
    /// The database table the step reads.
    public var table: String {
        switch self {
        case .objects(let t, _), .links(let t, _): t.table
        case .list(_, let l): l.table
        }
    }

    /// What the step loads, for people: `Bus`, `Bus links (driver)`, `Bus.stops`.
    public var what: String {
        switch self {
        case .objects(let t, _): t.type.name
        case .links(let t, let properties): "\(t.type.name) links (\(properties.joined(separator: ", ")))"
        case .list(let t, let l): "\(t.type.name).\(l.property.name)"
        }
    }
}

/// How far a load step is, reported after every batch.
public struct LoadProgress: Sendable {
    public var step: LoadPlan.Step
    public var rows: Int
    public var estimatedRows: Int?
    public var elapsed: Duration
    public var done: Bool

    /// Rows per second so far.
    public var rate: Double {
        let s = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return s > 0 ? Double(rows) / s : 0
    }

    /// Time left at the current rate, if the estimate allows one.
    public var remaining: Duration? {
        guard let estimatedRows, rate > 0, estimatedRows > rows else { return nil }
        return .milliseconds(Int64(Double(estimatedRows - rows) / rate * 1000))
    }
}

/// What a load did.
public struct LoadSummary: Sendable {
    public struct Table: Sendable {
        public var table: String
        public var what: String
        /// Rows read (link-table rows for a list).
        public var rows: Int
        /// Objects deleted (lists emptied) because the snapshot no longer has them.
        public var deleted: Int
        /// Links set to null, or list elements left out, because their target is missing.
        public var danglingLinks: Int
    }

    public var tables: [Table]
    /// The Realms that received rows.
    public var realms: [String]
    public var duration: Duration
    public var handOffPosition: String?

    public var rows: Int { tables.reduce(0) { $0 + $1.rows } }
}
