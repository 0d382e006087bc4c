import Foundation

extension RealmStore {
    /// What `transaction` (from the history of the Realm at `path`) changed: see ``ChangeSet``.
    ///
    /// Computed from the objects' before-images that the store records while an adapter that
    /// wants change sets follows the Realm (``Adapter`` with `recordsChanges`), and the objects'
    /// state at the transaction's end; valid as long as that adapter has not advanced past it.
    ///
    /// - Throws: `changesNotRecorded` for a transaction written while no such adapter followed
    ///   the Realm.
    public func changeSet(of transaction: RealmTransaction, in path: String) throws -> ChangeSet {
        try changeSets(of: [transaction], in: path)[0].get()
    }

    /// ``changeSet(of:in:)`` of each transaction, in one read (an event handler behind takes
    /// them by the batch); each is the change set or why there is none.
    public func changeSets(of transactions: [RealmTransaction], in path: String) throws
        -> [Result<ChangeSet, RealmAdapterError>]
    {
        try read { db in
            let reader = try reader(db, path)
            return try transactions.map { tx in
                do {
                    return .success(try Self.changeSet(of: tx, in: path, reader))
                } catch let e as RealmAdapterError where e.code == .invalidState {
                    return .failure(e)
                }
            }
        }
    }

    static func changeSet(of transaction: RealmTransaction, in path: String, _ reader: RealmReader) throws -> ChangeSet
    {
        let realmId = reader.tables.realmId
        var set = ChangeSet(
            path: path, version: transaction.version, origin: transaction.origin,
            committedAt: transaction.committedAt,
            schemaChanges: transaction.instructions.filter(\.isSchemaChange))
        let rows = try StoreRow.fetchCursor(
            reader.db.cachedStatement(
                // By the version's index: ordered by (type, key) SQLite would walk the primary
                // key through every row of the Realm.
                sql: """
                    SELECT type, key, before FROM object_change \(reader.db.dialect.indexHint("object_change_by_version"))
                    WHERE realm_id = ? AND version = ? ORDER BY type, key
                    """),
            arguments: [realmId, transaction.version])
        var recorded = false
        while let row = try rows.next() {
            recorded = true
            let type: String = row[0]
            let before = try (row[2] as Data?).map(Self.object(fromImage:))
            let after = try Self.state(type, reader.key(row[1], of: type), at: transaction.version, reader)
            set.add(type: type, before: before, after: after)
        }
        // Every instruction but CLEAR (of a type without objects) and schema changes records a row.
        let recordsRows = transaction.instructions.contains {
            if $0.isSchemaChange { return false }
            if case .clear = $0 { return false }
            return true
        }
        if recordsRows, !recorded {
            throw RealmAdapterError.changesNotRecorded(path: path, version: transaction.version)
        }
        for case .changeIdentity(let type, let from, let to) in transaction.instructions {
            var changes = set[type: type] ?? TypeChanges(objectType: type)
            changes.identityChanges.append(IdentityChange(from: from, to: to))
            set.put(changes)
        }
        return set
    }

    /// The object `key` of `type` at the end of `version`: the first before-image recorded
    /// after it, or, if none, the object as it is now (nil: it did not exist).
    static func state(_ type: String, _ key: Value, at version: Int64, _ reader: RealmReader) throws
        -> RealmObject?
    {
        let later = try StoreRow.fetchOne(
            reader.db.cachedStatement(
                sql: """
                    SELECT before FROM object_change WHERE realm_id = ? AND type = ? AND key = ? AND version > ?
                    ORDER BY version LIMIT 1
                    """), arguments: [reader.tables.realmId, type, StoreArgument.key(key), version])
        if let later { return try (later[0] as Data?).map(object(fromImage:)) }
        guard reader.schema[type: type] != nil else { return nil }
        return try reader.object(type, key)
    }
}
