/// Moving a store to another backend (`realm-adapter store copy`): from a directory to a
/// Postgres database, or back.
extension RealmStore {
    /// The store's own tables, as every backend has them (the Realms' objects are in the tables
    /// the registry names: ``objectTables(_:)``).
    static let copiedTables: [CopiedTable] = [
        CopiedTable("realm_schema", plain: ["id", "json"], orderedBy: ["id"], generated: "id"),
        CopiedTable(
            "realm", plain: ["id", "path", "schema_id", "version", "compacted_through", "created_at"],
            orderedBy: ["id"]),
        CopiedTable(
            "history",
            plain: [
                "id", "realm_id", "version", "origin", "committed_at", "instruction_count", "instructions", "source",
                "position",
            ], orderedBy: ["id"], generated: "id"),
        CopiedTable("metadata", plain: ["key", "value"], orderedBy: ["key"]),
        CopiedTable("object_type", plain: ["id", "name"], orderedBy: ["id"], generated: "id"),
        CopiedTable(
            "object_column", plain: ["type_id", "name", "kind", "id"], orderedBy: ["type_id", "name", "kind"]),
        CopiedTable(
            "adapter", plain: ["id", "name", "path_regex", "registered_at", "records_changes"], orderedBy: ["id"],
            generated: "id"),
        CopiedTable(
            "adapter_cursor", plain: ["adapter_id", "realm_id", "version"], orderedBy: ["adapter_id", "realm_id"]),
        CopiedTable("source", plain: ["id", "name"], orderedBy: ["id"], generated: "id"),
        CopiedTable(
            "source_position", plain: ["realm_id", "source_id", "position"], orderedBy: ["realm_id", "source_id"]),
        CopiedTable(
            "object_change", [.plain("realm_id"), .plain("type"), .key("key"), .plain("version"), .plain("before")],
            orderedBy: ["realm_id", "type", "key", "version"]),
        CopiedTable("source_floor", plain: ["source", "origin", "position"], orderedBy: ["source", "origin"]),
    ]

    /// The tables of the Realms' objects and lists, as the registry in `db` names them.
    static func objectTables(_ db: any StoreConnection) throws -> [CopiedTable] {
        var columns: [Int64: [CopiedTable.Column]] = [:]
        var lists: [CopiedTable] = []
        for r in try StoreRow.fetchAll(db, sql: "SELECT type_id, id, kind FROM object_column ORDER BY type_id, id") {
            let (type, n, kind): (Int64, Int64, String) = (r[0], r[1], r[2])
            guard kind.hasPrefix("LIST ") else {
                columns[type, default: []].append(kind == "LINK" ? .key("c\(n)") : .value("c\(n)", kind: kind))
                continue
            }
            let element = String(kind.dropFirst(5))
            lists.append(
                CopiedTable(
                    "t\(type)_c\(n)",
                    [
                        .plain("realm"), .key("owner"), .plain("idx"),
                        element == "LINK" ? .key("value") : .value("value", kind: element),
                    ],
                    orderedBy: ["realm", "owner", "idx"]))
        }
        let types = try Int64.fetchAll(db, sql: "SELECT id FROM object_type ORDER BY id").map { id in
            CopiedTable("t\(id)", [.plain("realm"), .key("key")] + (columns[id] ?? []), orderedBy: ["realm", "key"])
        }
        return types + lists
    }

    /// The daemon locks of the adapters registered in this store, held while the value lives:
    /// no daemon or load writes to the store while it is copied.
    /// - Throws: `invalidState` when a daemon (or a load) runs an adapter on the store.
    package func lockedForCopy() throws -> [DaemonLock] {
        let adapters = try read { db in try String.fetchAll(db, sql: "SELECT name FROM adapter ORDER BY name") }
        return try adapters.map { try DaemonLock.forCopy(store: self, adapter: $0) }
    }

    /// Copies everything this store holds (Realms, their objects, history and versions, adapters'
    /// cursors, source positions, recorded changes, metadata) into `target`, a store on another
    /// backend that holds nothing yet, in one transaction of the target: all or nothing.
    ///
    /// Reads one snapshot of this store. `progress` is told each table's name and the rows copied
    /// so far. Once committed, the target's count of rows in each table is checked against this
    /// store's.
    ///
    /// - Returns: the tables and their numbers of rows.
    /// - Throws: `invalidState` if the target holds anything, or if the counts differ.
    @discardableResult
    package func copy(to target: RealmStore, progress: (String, Int) -> Void = { _, _ in }) throws
        -> [(table: String, rows: Int)]
    {
        let copy = StoreCopy(from: backend) { db in Self.copiedTables + (try Self.objectTables(db)) }
        defer { copy.close() }
        try target.write(.flushed) { db in
            try StoreCopy.requireEmpty(Self.copiedTables, in: db, target: target.directory)
            try copy.write(tables: Self.copiedTables.count, into: db, progress: progress)
            // The registry and the schemas are there: the tables they name are made, then filled.
            let schemas = try String.fetchAll(db, sql: "SELECT json FROM realm_schema ORDER BY id").map {
                try Schema(json: try JSONValue(parsing: $0, errorCode: .storeUnavailable), path: "stored schema")
            }
            try target.layout.makeRegisteredTables(schemas: schemas, db: db)
            try copy.write(into: db, progress: progress)
            try copy.continueGenerated(in: db)
        }
        return try target.read { db in try copy.verify(in: db) }
    }
}
