/// What a bulk load needs beyond single instructions: the Realm's schema brought up to the
/// configured one, lists replaced whole, and a note of every object and list it wrote, so that
/// a re-run can remove what the database no longer has.
///
/// The notes live in a temporary table of the store's writer connection (on disk when large,
/// never in the process's memory) and vanish at the end of the load or with the process.
extension WriteTransaction {
    /// Adds the types and properties of `schema` that the Realm lacks (a new Realm gets them all).
    public mutating func adopt(_ schema: Schema) throws {
        for t in schema.types {
            guard let existing = self.schema[type: t.name] else {
                try addType(t)
                continue
            }
            let missing = t.properties.filter { existing[property: $0.name] == nil }
            if !missing.isEmpty { try addProperties(missing, to: t.name) }
        }
    }

    /// Turns a list into `wanted` with the fewest instructions (LIST_SET in place, then
    /// LIST_INSERT at the end or LIST_ERASE from the end).
    public mutating func replaceList(_ type: String, _ identity: Value, _ property: String, with wanted: [Value]) throws
    {
        let have = try list(type, identity, property)
        if have.isEmpty { return try listAppend(type, identity, property, contentsOf: wanted) }
        for i in 0..<min(wanted.count, have.count) where wanted[i] != have[i] {
            try listSet(type, identity, property, at: i, wanted[i])
        }
        for i in have.count..<max(have.count, wanted.count) {
            try listInsert(type, identity, property, at: i, wanted[i])
        }
        for i in stride(from: have.count - 1, through: wanted.count, by: -1) {
            try listErase(type, identity, property, at: i)
        }
    }

    /// The number of objects of `type` (0 if the Realm has no such type yet).
    func count(_ type: String) throws -> Int {
        guard schema[type: type] != nil else { return 0 }
        return try reader.count(type)
    }

    /// Notes that the load wrote the object (`kind` a type name) or the list (`kind`
    /// `Type.property`) with this identity. Returns false if it was noted already.
    @discardableResult
    func noteLoaded(_ kind: String, _ identity: Value) throws -> Bool {
        try writer.db.cachedStatement(
            sql: """
                INSERT INTO \(writer.db.dialect.temporaryTable("load_note")) (realm_id, kind, key) VALUES (?, ?, ?)
                ON CONFLICT DO NOTHING
                """
        )
        .execute(arguments: [writer.tables.realmId, kind, StoreArgument.key(identity)])
        return writer.db.changesCount == 1
    }

    /// Whether the Realm has the object (cheaper than reading it).
    func exists(_ type: String, _ identity: Value) throws -> Bool {
        let (_, tt) = try writer.type(type)
        return try writer.exists(tt, identity.coercedKey(of: type, in: schema))
    }

    /// Deletes up to `limit` objects of `type` the load did not note, in key order after
    /// `after`; returns how many it deleted and the last key (to go on from).
    mutating func deleteNotLoaded(_ type: String, after: Value?, limit: Int) throws -> (Int, Value?) {
        let (t, tt) = try writer.type(type)
        let keys = try notLoaded(table: tt.table, key: TypeTables.key, kind: type, after: after, limit: limit)
        let decoded = keys.map { RealmTables.decode(writer.db.dialect.storedKey($0), as: RealmTables.keyType(of: t)) }
        for k in decoded { try delete(type, k) }
        return (decoded.count, decoded.last)
    }

    /// Empties up to `limit` lists `type.property` the load did not note, in owner order after
    /// `after`; returns how many and the last owner.
    mutating func clearListsNotLoaded(_ type: String, _ property: String, after: Value?, limit: Int) throws -> (
        Int, Value?
    ) {
        let (t, _) = try writer.type(type)
        let owners = try notLoaded(
            table: try writer.listTable(t, property), key: "owner", kind: "\(type).\(property)", after: after,
            limit: limit)
        let decoded = owners.map { RealmTables.decode(writer.db.dialect.storedKey($0), as: RealmTables.keyType(of: t)) }
        for o in decoded { try listClear(type, o, property) }
        return (decoded.count, decoded.last)
    }

    /// `+o.key`: without the column's affinity, so that the notes' primary key serves the
    /// lookup (an INTEGER column compared with the untyped note key would scan all notes per row).
    private func notLoaded(table: String, key: String, kind: String, after: Value?, limit: Int) throws
        -> [StoredValue]
    {
        var arguments: StoreArguments = [writer.realm, writer.realm, kind]
        if let after { arguments.append(StoreArgument.key(after)) }
        arguments.append(limit)
        let d = writer.db.dialect
        return try StoredValue.fetchAll(
            writer.db,
            sql: """
                SELECT DISTINCT \(key) FROM \(table) AS o
                WHERE o.realm = ? AND NOT EXISTS (SELECT 1 FROM \(d.temporaryTable("load_note")) n
                    WHERE n.realm_id = ? AND n.kind = ? AND n.key = \(d.unindexed("o.\(key)")))
                \(after == nil ? "" : "AND \(key) > ?") ORDER BY \(key) LIMIT ?
                """, arguments: arguments)
    }
}

extension RealmStore {
    /// Starts (`true`) or ends a load's notes (see ``WriteTransaction/noteLoaded(_:_:)``):
    /// both drop what an earlier load of this process noted.
    func resetLoadNotes(starting: Bool) throws {
        do {
            try backend.onWriter { db in
                let d = db.dialect
                try db.execute(sql: "DROP TABLE IF EXISTS \(d.temporaryTable("load_note"))")
                if starting {
                    try db.execute(
                        sql: """
                            CREATE TEMP TABLE load_note (realm_id \(d.columnType("INTEGER")), kind \(d.columnType("TEXT")), \
                            key \(d.keyColumnType), PRIMARY KEY (realm_id, kind, key))\(d.keyedTableSuffix)
                            """)
                }
            }
        } catch let e as StoreError { throw Self.wrap(e) }
    }

}
