struct ListKey: Hashable {
    var type: String
    var identity: Value
    var property: String
}

/// Applies database transactions to Realms, exactly once (ARCHITECTURE.md: Database → Realm).
///
/// Each transaction is written to all its Realms in one store transaction, together with its
/// source position; a Realm whose recorded position is already at or past it is skipped, so a
/// replay after a crash (the connector confirms a position only after this returns) changes
/// nothing. Writes carry the adapter's origin: the adapter never sends them back.
public struct RealmApplier: Sendable {
    public let store: RealmStore
    /// The mapping, shared with the other direction (it grows when Realm schema changes are applied).
    public let mappings: SharedMapping
    public var mapping: Mapping { mappings.current }
    /// The origin of the writes: the adapter's, so its own cursor skips them.
    public let origin: String
    /// The name positions are recorded under (the connector's `sourceName`).
    public let source: String

    public init(store: RealmStore, mapping: Mapping, origin: String, source: String) {
        self.init(store: store, mappings: SharedMapping(mapping), origin: origin, source: source)
    }

    public init(store: RealmStore, mappings: SharedMapping, origin: String, source: String) {
        self.store = store
        self.mappings = mappings
        self.origin = origin
        self.source = source
    }

    /// Applies `transaction` and returns the Realm paths it changed. Of an own transaction
    /// (``DatabaseTransaction/isOwn``) only the database keys it generated are applied
    /// (``Mapping/databaseKeyFills(_:)``), and the rows its writes missed, as the database
    /// holds them now (``DatabaseTransaction/missedRows``).
    ///
    /// - Parameter pending: for the paths and the changes bound for each, the Realm writes the
    ///   database does not hold yet as of this transaction, by path (all paths at once: one read
    ///   for many per-user Realms); the convergence rule (``PendingWrites``) keeps them.
    /// - Parameter linkList: a list of links as the database holds it now (its link table's
    ///   rows for the owner, in index order).
    /// - Parameter row: a row as the database holds it now (see `Mapping.objectChanges`).
    /// - Parameter writeRealmIds: writes RealmIds generated for rows without one back to the
    ///   database; called before the Realms commit (a replay generates the same ones).
    /// - Parameter setAside: with it (`ignoreSQLErrors`), a row change no Realm can hold is
    ///   handed to it before the Realms commit, and the rest of the transaction applies; without
    ///   it, such a row stops the transaction with an error naming table, column, key and why.
    @discardableResult
    public func apply(
        _ transaction: DatabaseTransaction,
        pending: ([(path: String, changes: [ObjectChange])]) throws -> [String: PendingWrites] = { _ in [:] },
        linkList: (LinkListMapping, Value) throws -> [Value] = { _, _ in [] },
        row: (String, DatabaseRow, [String]) throws -> DatabaseRow? = { _, _, _ in nil },
        writeRealmIds: ([RealmIdAssignment]) throws -> Void = { _ in },
        setAside: (([SetAsideRow]) throws -> Void)? = nil
    ) throws -> [String] {
        let mapping = self.mapping  // one mapping for the whole transaction
        let store = self.store
        let keys = DatabaseKeyResolver { path, type, key in
            guard let dk = mapping.table(forType: type)?.databaseKey else { return nil }
            return try store.identity(of: type, where: dk.property, equals: key, in: path)
        }
        var transaction = transaction
        if !transaction.readBack.isEmpty { transaction.changes = try Self.readingBack(transaction, mapping, row) }
        let groups: [(path: String, changes: [ObjectChange])]
        if transaction.isOwn {
            var own = ChangesByPath(mapping.hasDatabaseKeys ? try mapping.databaseKeyFills(transaction.changes) : [])
            // The rows as the database stored them: what it set itself (triggers, defaults,
            // generated columns, cascades, rounding) comes back; what the Realm wrote records
            // nothing. Link tables are left out: the database rarely changes them on its own,
            // and each would cost a read of the list.
            let stored = transaction.changes.filter { $0.tables.allSatisfy { mapping.linkList(named: $0) == nil } }
            own.add(
                Self.lastImages(
                    try mapping.objectChanges(stored, paths: { try store.realmPaths() }, row: row, keys: keys)))
            let missed = try reread(transaction.missedRows, mapping, row)
            own.add(try mapping.objectChanges(missed, paths: { try store.realmPaths() }, row: row, keys: keys))
            // Usually the rows are what the Realm wrote: read, compared, and no store write at all.
            groups = try own.groups.compactMap { g in
                let schema = try store.contains(g.path) ? try store.schema(of: g.path) : Schema.empty
                let changes = try g.changes.filter { try !Self.holdsAlready($0, store, g.path, schema) }
                return changes.isEmpty ? nil : (g.path, changes)
            }
        } else {
            var aside: [SetAsideRow] = []
            do {
                groups = try mapping.objectChanges(
                    transaction.changes, paths: { try store.realmPaths() }, row: row, keys: keys,
                    setAside: setAside == nil
                        ? nil : { aside.append(SetAsideRow($0, error: $1, position: transaction.position)) })
            } catch let e as RealmAdapterError where e.code == .invalidValue {
                throw e.replayed()
            }
            // Kept before the Realms commit: a replay may keep them twice, but never loses them.
            if let setAside, !aside.isEmpty,
                try groups.isEmpty || groups.contains(where: { try !holds($0.path, transaction.position) })
            {
                try setAside(aside)
            }
        }
        // Realms that already hold this transaction (a replay after a crash) are skipped.
        var held = try store.standings(of: groups.map(\.path), source: source, origin: origin)
        let toApply = groups.filter { g in !(held[g.path]?.position.map { $0 >= transaction.position } ?? false) }
        guard !toApply.isEmpty else { return [] }
        if !keys.assignments.isEmpty { try writeRealmIds(keys.assignments) }
        try Failpoint.dbToRealmBeforeCommit.hit()
        var byPath = Dictionary(toApply.map { ($0.path, $0.changes) }, uniquingKeysWith: { a, _ in a })
        var inRuns = true
        // The pending Realm writes are read before the store transaction begins: if another
        // writer commits to one of these Realms after the versions were read, they are read again
        // (otherwise its write would be overwritten here while the database is still to get it).
        while true {
            let waiting = try pending(toApply)
            do {
                let versions = held.mapValues(\.version)
                try write(
                    mapping, toApply.map(\.path), byPath, waiting, versions, transaction.position, linkList,
                    inRuns: inRuns)
                break
            } catch is RunRefused {
                // Applied again one by one, which names the object refused.
                inRuns = false
            } catch is RealmChangedMeanwhile {
                held = try store.standings(of: toApply.map(\.path), source: source, origin: origin)
            } catch let refused as ObjectRefused {
                // A row the Realm refuses (a link to an object it lacks: its row was set aside, or is
                // in another Realm) is a bad row like one the mapping refuses; the rest applies.
                guard !transaction.isOwn else { throw refused.cause }
                let error = refused.error(mapping)
                guard let setAside else { throw error.replayed() }
                try setAside(
                    refused.rows(transaction.changes, mapping).map {
                        SetAsideRow($0, error: error, position: transaction.position)
                    })
                byPath[refused.path]?.removeAll { refused.concerns($0) }
            }
        }
        return toApply.map(\.path)
    }

    private struct RealmChangedMeanwhile: Error {}

    /// A run of upserts (``WriteTransaction/upsert(_:each:)``) was refused, with nothing written.
    private struct RunRefused: Error {}

    /// The Realm at `path` refused a change of one object (`error`, with nothing written).
    struct ObjectRefused: Error {
        var path: String
        var type: String
        var identity: Value
        var cause: RealmAdapterError

        /// Whether `change` is a change of this object.
        func concerns(_ change: ObjectChange) -> Bool {
            switch change {
            case .upsert(let t, let id, _), .update(let t, let id, _), .delete(let t, let id),
                .listChanged(let t, let id, _):
                t == type && id == identity
            case .clear: false
            }
        }

        /// The refusal as a bad row's error, naming table and key (not the row's values).
        func error(_ mapping: Mapping) -> RealmAdapterError {
            let table = mapping.table(forType: type)?.table ?? type
            let row = "Table \(table), row with key \(Mapping.keyText(identity))"
            var e = RealmAdapterError(
                .invalidValue, "\(row): the Realm refuses it: \(cause.rejectionReason)", context: cause.context)
            e.context["db.table"] = table
            return e
        }

        /// The row changes of the transaction that made this object's change (its key row, if
        /// none can be found: a key the database generates).
        func rows(_ changes: [RowChange], _ mapping: Mapping) -> [RowChange] {
            guard let t = mapping.table(forType: type) else { return [] }
            let found = changes.filter { change in
                switch change {
                case .insert(let table, let row), .update(let table, let row, _), .delete(let table, let row):
                    table == t.table && (try? mapping.key(row, t)) == identity
                case .truncate: false
                }
            }
            if !found.isEmpty { return found }
            return [.update(table: t.table, row: (try? mapping.keyRow(t, identity)) ?? DatabaseRow(), oldKey: nil)]
        }
    }

    /// The changes with the columns the stream does not carry read back from the database, as it
    /// holds them now (a later change brings the same or newer values).
    static func readingBack(
        _ tx: DatabaseTransaction, _ mapping: Mapping,
        _ row: (String, DatabaseRow, [String]) throws -> DatabaseRow?
    ) throws -> [RowChange] {
        try tx.changes.map { change in
            switch change {
            case .insert(let table, var r), .update(let table, var r, _):
                guard let columns = tx.readBack[table], !columns.isEmpty, let t = mapping.table(named: table) else {
                    return change
                }
                var key = DatabaseRow()
                for c in t.keyColumns { key[c] = r[c] }
                guard key.values.count == t.keyColumns.count, let now = try row(table, key, columns) else {
                    return change
                }
                for (c, v) in now.values {
                    r[c] = v
                    r.unreadable[c] = nil
                    r.missing.remove(c)
                }
                r.unreadable.merge(now.unreadable) { _, new in new }
                if case .update(_, _, let old) = change { return .update(table: table, row: r, oldKey: old) }
                return .insert(table: table, row: r)
            default:
                return change
            }
        }
    }

    /// Of an own transaction, the last image of each row only: its statements may write a row
    /// several times (an update, then a list's array column), and the images before the last
    /// are states the Realm has moved past; an object the transaction deletes afterwards (one
    /// created and deleted within a group commit) gets none, and a delete the transaction writes
    /// the row again after (an object deleted and created again) is left out with the images
    /// before it: the Realm compares the last image with what it holds, and nothing else.
    static func lastImages(_ groups: [(path: String, changes: [ObjectChange])]) -> [(
        path: String, changes: [ObjectChange]
    )] {
        groups.map { group in
            var later = Set<ObjectKey>()
            var kept: [ObjectChange] = []
            for change in group.changes.reversed() {
                switch change {
                case .delete(let type, let identity), .upsert(let type, let identity, _):
                    guard later.insert(ObjectKey(type: type, identity: identity)).inserted else { continue }
                default:
                    break
                }
                kept.append(change)
            }
            return (group.path, kept.reversed())
        }
    }

    struct ObjectKey: Hashable {
        var type: String
        var identity: Value
    }

    /// Whether the Realm at `path` already is as `change` would make it (an upsert of the values
    /// it has, a delete of an object it lacks).
    static func holdsAlready(_ change: ObjectChange, _ store: RealmStore, _ path: String, _ schema: Schema) throws
        -> Bool
    {
        switch change {
        case .upsert(let type, let identity, let values):
            guard schema[type: type] != nil, let object = try store.object(of: type, identity: identity, in: path)
            else { return false }
            return values.allSatisfy { object.values[$0.name] == $0.value }
        case .delete(let type, let identity):
            guard schema[type: type] != nil else { return true }
            return try store.object(of: type, identity: identity, in: path) == nil
        default:
            return false
        }
    }

    /// Whether the Realm at `path` already holds the source's transaction at `position`.
    private func holds(_ path: String, _ position: String) throws -> Bool {
        guard let done = try store.sourcePosition(source, of: path, origin: origin) else { return false }
        return done >= position
    }

    /// Rows an own write missed, as changes that bring the Realm to the database's rows now:
    /// the whole row if the database has it, a delete if not; for a link table, the owner's
    /// list (read back in full, as for any link-table change).
    private func reread(
        _ rows: [RowReference], _ mapping: Mapping, _ row: (String, DatabaseRow, [String]) throws -> DatabaseRow?
    ) throws -> [RowChange] {
        try rows.compactMap { r in
            if mapping.linkList(named: r.table) != nil { return .insert(table: r.table, row: r.key) }
            guard let t = mapping.table(named: r.table) else { return nil }
            if let now = try row(r.table, r.key, t.columns.map(\.column) + t.pathColumns) {
                return .insert(table: r.table, row: now)
            }
            return .delete(table: r.table, key: r.key)
        }
    }

    /// The upserts of `type` that `changes` start with, up to one of an object named before.
    static func upserts(of type: String, in changes: ArraySlice<ObjectChange>) -> [(
        identity: Value, values: PropertyValues
    )] {
        var run: [(identity: Value, values: PropertyValues)] = []
        var named = Set<Value>()
        for change in changes {
            guard case .upsert(let t, let identity, let values) = change, t == type, named.insert(identity).inserted
            else { break }
            run.append((identity, values))
        }
        return run
    }

    private func write(
        _ mapping: Mapping, _ paths: [String], _ byPath: [String: [ObjectChange]], _ waiting: [String: PendingWrites],
        _ versions: [String: Int64],
        _ position: String, _ linkList: (LinkListMapping, Value) throws -> [Value], inRuns: Bool
    ) throws {
        try store.write(
            toEach: paths, origin: origin, sourcePosition: SourcePosition(source: source, position: position)
        ) { path, tx in
            guard tx.baseVersion == versions[path, default: 0] else { throw RealmChangedMeanwhile() }
            try tx.adopt(mapping.schema)
            // Lists are read back from the database once per transaction, after the objects
            // (their targets may come later in it).
            var lists: [ListKey] = []
            var rest = byPath[path]!.compactMap((waiting[path] ?? .none).filter)[...]
            while let change = rest.first {
                if inRuns, case .upsert(let type, _, _) = change {
                    let run = Self.upserts(of: type, in: rest)
                    if run.count > 1 {
                        do { try tx.upsert(type, each: run) } catch is RealmAdapterError { throw RunRefused() }
                        rest = rest.dropFirst(run.count)
                        continue
                    }
                }
                rest = rest.dropFirst()
                do {
                    switch change {
                    case .listChanged(let type, let identity, let property):
                        let key = ListKey(type: type, identity: identity, property: property)
                        if !lists.contains(key) { lists.append(key) }
                    case .upsert(let type, let identity, let values):
                        try tx.upsert(type, identity, values)  // records only what changed
                    case .update(let type, let identity, let values):
                        if try tx.object(type, identity) != nil { try tx.upsert(type, identity, values) }
                    case .delete(let type, let identity):
                        if try tx.object(type, identity) != nil { try tx.delete(type, identity) }
                    case .clear(let type):
                        try tx.deleteAll(type)
                    }
                } catch let e as RealmAdapterError {
                    switch change {
                    case .upsert(let t, let id, _), .update(let t, let id, _), .delete(let t, let id):
                        throw ObjectRefused(path: path, type: t, identity: id, cause: e)
                    default:
                        throw e
                    }
                }
            }
            for key in lists where try tx.object(key.type, key.identity) != nil {
                guard let owner = mapping.table(forType: key.type),
                    let l = owner.linkLists.first(where: { $0.property.name == key.property })
                else { continue }
                // Link tables hold database keys where types have them.
                var ownerKey = key.identity
                if let dk = owner.databaseKey {
                    guard let k = try tx.object(key.type, key.identity)?.values[dk.property], !k.isNull else {
                        continue
                    }
                    ownerKey = k
                }
                var targets = try linkList(l, ownerKey)
                if let dk = mapping.table(forType: l.target)?.databaseKey {
                    targets = try targets.compactMap { try tx.identity(of: l.target, where: dk.property, equals: $0) }
                }
                // Targets the Realm does not hold (yet) are left out; a later change brings them.
                let wanted = try targets.filter { try tx.object(l.target, $0) != nil }
                try tx.replaceList(key.type, key.identity, key.property, with: wanted)
            }
        }
    }
}
