import Foundation

/// A Realm as it was at the end of one version, read from the store as it is now and the
/// objects' before-images recorded since (see ``RealmStore/changeSet(of:in:)``).
///
/// An event handler gets one with each event, so that what it reads agrees with the change it
/// was told about even when later transactions have committed. Reads are exact for Realms an
/// adapter that records changes follows, while its cursor is not past `version`; the schema is
/// the Realm's current one (schemas only grow, and a property added later reads as null).
public struct RealmSnapshot: Sendable {
    public let store: RealmStore
    public let path: String
    public let version: Int64

    public init(store: RealmStore, path: String, version: Int64) {
        self.store = store
        self.path = path
        self.version = version
    }

    /// The object of `type` with this identity at `version`, or nil.
    public func object(of type: String, identity: Value) throws -> RealmObject? {
        try read { reader in
            guard let t = reader.schema[type: type] else { throw RealmAdapterError.unknownType(type) }
            return try RealmStore.state(t.name, identity.coercedKey(of: type, in: reader.schema), at: version, reader)
        }
    }

    /// The objects of `type` at `version`: those unchanged since, in identity order, then those
    /// changed or deleted since, as they were.
    public func objects(of type: String) throws -> [RealmObject] {
        try read { reader in
            guard reader.schema[type: type] != nil else { throw RealmAdapterError.unknownType(type) }
            // Each object changed after `version`, as its first change after it found it.
            let rows = try StoreRow.fetchAll(
                reader.db,
                sql: """
                    SELECT key, before FROM object_change o WHERE realm_id = ?1 AND type = ?2 AND version = (
                        SELECT min(version) FROM object_change WHERE realm_id = ?1 AND type = ?2 AND key = o.key
                        AND version > ?3)
                    ORDER BY key
                    """, arguments: [reader.tables.realmId, type, version])
            var changed = Set<Value>()
            var restored: [RealmObject] = []
            for row in rows {
                changed.insert(reader.key(row[0], of: type))
                if let image = row[1] as Data? { restored.append(try RealmStore.object(fromImage: image)) }
            }
            var out: [RealmObject] = []
            try reader.forEachObject(type) { o in
                let unchanged = changed.isEmpty || !changed.contains(o.identity)
                if unchanged { out.append(o) }
            }
            return out + restored
        }
    }

    private func read<T>(_ body: (RealmReader) throws -> T) throws -> T {
        try store.read { db in try body(try store.reader(db, path)) }
    }
}
