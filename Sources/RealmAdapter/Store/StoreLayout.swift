import Synchronization

/// How the Realms' objects are laid out in SQLite: by object type, never by Realm, so the number
/// of tables does not grow with the number of Realms (per-user Realms run to the hundreds of
/// thousands).
///
/// Every Realm that has a type named `Task` keeps its objects in that type's one table
/// `t{id}(realm, key, c1, c2, …)`, keyed by (realm, primary key or row key); a list property
/// has a table `t{id}_c{n}(realm, owner, idx, value)`. Realm names are case-sensitive and SQLite
/// identifiers are not, so tables and columns are named by number, from a registry
/// (`object_type`, `object_column`) that only grows, as schemas do.
///
/// A column stands for a property name and a storage kind (`INTEGER`, `REAL`, `TEXT`, `BLOB`,
/// `LINK`, `LIST …`): two Realms that give a property the same name and kind share its column,
/// and two that give it different kinds (`title: string` in one, `title: int` in another) get one
/// column each. Each Realm's schema says which columns are its; a Realm's rows hold NULL in the
/// others. The primary key lives in `key` (untyped: Realms may key one type differently).
///
/// Resolved tables are cached in memory, shared by every Realm whose type has the same schema.
/// The registry is written only inside the store's write transactions; after one fails,
/// ``forget()`` drops the cache, which may then name tables that were rolled back.
final class StoreLayout: Sendable {
    private struct State {
        var types: [String: TypeEntry] = [:]
        /// By type name: each schema of that name seen, with its tables (found by `==`, which is
        /// quick for the schema a Realm shares, where hashing a whole schema is not).
        var resolved: [String: [(schema: ObjectSchema, tables: TypeTables)]] = [:]
        /// By type name, as `resolved`: the INSERT plan of each schema of that name.
        var plans: [String: [(schema: ObjectSchema, plan: RealmWriter.InsertPlan)]] = [:]
        var planCount = 0
    }
    private struct TypeEntry {
        var id: Int64
        var columns: [ColumnKey: Int64]
    }
    private struct ColumnKey: Hashable {
        var name: String
        var kind: String
    }
    private let state = Mutex(State())
    /// While true, links' indexes are left out when types are registered (a bulk load builds
    /// them at its end, ``ensureLinkIndexes(db:)``).
    let linkIndexesDeferred = Atomic(false)

    /// Drops everything cached (after a write transaction that failed: what it registered is gone).
    func forget() { state.withLock { $0 = State() } }

    /// The writer's INSERT plan of a type without links, shared by the Realms that have it.
    /// Nil when the plan kept was prepared on another connection than `connection` (one that
    /// broke, on a backend that connects anew).
    func insertPlan(for t: ObjectSchema, on connection: AnyObject) -> RealmWriter.InsertPlan? {
        let plan = state.withLock { $0.plans[t.name]?.first { $0.schema == t }?.plan }
        return plan?.connection === connection ? plan : nil
    }

    /// Keeps `plan`, in place of any plan kept for the same schema.
    func keep(_ plan: RealmWriter.InsertPlan, for t: ObjectSchema) {
        state.withLock { s in
            if let i = s.plans[t.name]?.firstIndex(where: { $0.schema == t }) {
                s.plans[t.name]![i].plan = plan
                return
            }
            if s.planCount >= 1_000 { (s.plans, s.planCount) = ([:], 0) }
            s.plans[t.name, default: []].append((t, plan))
            s.planCount += 1
        }
    }

    /// The tables and columns of type `t` as a Realm with that type sees them.
    func tables(of t: ObjectSchema, db: any StoreConnection) throws -> TypeTables {
        if let cached = resolvedTables(of: t) { return cached }
        var entry = try typeEntry(t.name, db: db, creating: false)
        var columns: [String?] = []
        var lists: [String?] = []
        for p in t.properties {
            guard let kind = Self.kind(p), p.name != t.primaryKey else {
                columns.append(p.name == t.primaryKey ? TypeTables.key : nil)
                lists.append(nil)
                continue
            }
            let key = ColumnKey(name: p.name, kind: kind)
            if entry.columns[key] == nil { entry = try typeEntry(t.name, db: db, creating: false, reload: true) }
            guard let n = entry.columns[key] else { throw Self.unregistered(t, p) }
            let isList = p.type.isList
            columns.append(isList ? nil : "c\(n)")
            lists.append(isList ? "t\(entry.id)_c\(n)" : nil)
        }
        let resolved = TypeTables(table: "t\(entry.id)", columns: columns, listTables: lists)
        state.withLock { s in
            if s.resolved[t.name]?.contains(where: { $0.schema == t }) != true {
                s.resolved[t.name, default: []].append((t, resolved))
            }
        }
        return resolved
    }

    /// The tables of `t` if a Realm with that very schema resolved them before: the registry
    /// only grows, so they stay right until ``forget()``.
    private func resolvedTables(of t: ObjectSchema) -> TypeTables? {
        state.withLock { $0.resolved[t.name]?.first { $0.schema == t }?.tables }
    }

    /// Registers and creates what properties `first...` of type `t` need (the whole type when
    /// `first` is 0): its table, columns, list tables and indexes, where no Realm made them yet.
    /// When the Realm had the type before (`isNew` false), its objects get the new properties'
    /// defaults. Called inside a write transaction.
    func prepare(
        _ t: ObjectSchema, fromProperty first: Int, isNew: Bool, realmId: Int64, schema: Schema,
        db: any StoreConnection
    ) throws {
        // A type another Realm already has, exactly so: all it needs exists (per-user Realms).
        if isNew, resolvedTables(of: t) != nil { return }
        var entry = try typeEntry(t.name, db: db, creating: true)
        let table = "t\(entry.id)"
        for j in first..<t.properties.count {
            let p = t.properties[j]
            guard let kind = Self.kind(p), p.name != t.primaryKey else { continue }
            let key = ColumnKey(name: p.name, kind: kind)
            // Another process may have registered it since this one cached the type.
            if entry.columns[key] == nil { entry = try typeEntry(t.name, db: db, creating: true, reload: true) }
            let n: Int64
            if let existing = entry.columns[key] {
                n = existing
            } else {
                n = try Self.addColumn(key, to: entry.id, db: db)
                entry.columns[key] = n
                state.withLock { $0.types[t.name] = entry }
            }
            if p.type.isList {
                try Self.makeStorage(of: kind, column: n, type: entry.id, db: db)
                if p.type.linkTarget != nil && !linkIndexesDeferred.load(ordering: .relaxed) {
                    try db.execute(sql: Self.linkIndex(list: "\(table)_c\(n)"))
                }
                continue
            }
            if !isNew, let d = p.defaultValue {
                // The objects there take the default now; the schema's own check comes at commit.
                let value: Value
                do {
                    value = try d.coerced(to: p, in: schema)
                    _ = try RealmTables.encode(value)
                } catch let e as RealmAdapterError {
                    throw Schema.error(t.name, p.name, "the default value does not fit: \(e.message)")
                }
                try db.execute(
                    sql: "UPDATE \(table) SET c\(n) = ? WHERE realm = ?",
                    arguments: [StoreArgument.value(value), realmId])
            }
            // The database key is indexed too: database changes find objects by it.
            let deferred = linkIndexesDeferred.load(ordering: .relaxed)
            if p.isIndexed || p.name == t.databasePrimaryKey || (p.type.linkTarget != nil && !deferred) {
                try db.execute(sql: Self.index(table, column: n, db.dialect))
            }
        }
    }

    /// The index of column `c{n}` of an object table (links, indexed properties, database keys),
    /// its nulls where a query sorted by the column wants them (first).
    private static func index(_ table: String, column n: Int64, _ dialect: any StoreDialect) -> String {
        let nulls = dialect.nullsSortFirst(descending: false)
        return "CREATE INDEX IF NOT EXISTS \(table)_c\(n)_i ON \(table)(realm, c\(n)\(nulls))"
    }

    /// The index of a list of links' targets: deleting an object finds the lists that hold it.
    private static func linkIndex(list table: String) -> String {
        "CREATE INDEX IF NOT EXISTS \(table)_value ON \(table)(realm, value)"
    }

    /// Creates the index of every link and list of links of every type that lacks it (after a
    /// bulk load that deferred them, or one interrupted before it built them). Called inside a
    /// write transaction.
    func ensureLinkIndexes(db: any StoreConnection) throws {
        let links = try StoreRow.fetchAll(
            db,
            sql: "SELECT type_id, id, kind FROM object_column WHERE kind IN ('LINK', 'LIST LINK') ORDER BY type_id, id")
        for r in links {
            let (type, n, kind): (Int64, Int64, String) = (r[0], r[1], r[2])
            try db.execute(
                sql: kind == "LINK"
                    ? Self.index("t\(type)", column: n, db.dialect) : Self.linkIndex(list: "t\(type)_c\(n)"))
        }
    }

    /// Every table holding objects or lists of any Realm (for removing a Realm).
    func allTables(db: any StoreConnection) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT 't' || id FROM object_type
                UNION ALL SELECT 't' || type_id || '_c' || id FROM object_column WHERE kind LIKE 'LIST %'
                """)
    }

    /// The storage kind of a property's column: the SQLite type of a single value, `LINK` (the
    /// target's key, untyped: the target may be added later in the same transaction), or `LIST`
    /// and its element's kind; nil for what is not stored (linking objects).
    static func kind(_ p: Property) -> String? {
        switch p.type {
        case .scalar(let s): RealmTables.sqlType(s)
        case .link: "LINK"
        case .list(.scalar(let s)): "LIST " + RealmTables.sqlType(s)
        case .list(.link): "LIST LINK"
        default: nil
        }
    }

    private func typeEntry(_ name: String, db: any StoreConnection, creating: Bool, reload: Bool = false) throws
        -> TypeEntry
    {
        if !reload, let cached = state.withLock({ $0.types[name] }) { return cached }
        var id = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM object_type WHERE name = ?"), arguments: [name])
        if id == nil {
            guard creating else { throw RealmAdapterError.storeLayoutMissing(type: name) }
            try db.execute(sql: "INSERT INTO object_type (name) VALUES (?)", arguments: [name])
            id = db.lastInsertedRowID
            try Self.makeTable(type: id!, db: db)
        }
        var columns: [ColumnKey: Int64] = [:]
        let rows = try StoreRow.fetchCursor(
            db.cachedStatement(sql: "SELECT name, kind, id FROM object_column WHERE type_id = ?"), arguments: [id!])
        while let row = try rows.next() { columns[ColumnKey(name: row[0], kind: row[1])] = row[2] }
        let entry = TypeEntry(id: id!, columns: columns)
        state.withLock { $0.types[name] = entry }
        return entry
    }

    private static func addColumn(_ key: ColumnKey, to typeId: Int64, db: any StoreConnection) throws -> Int64 {
        let n =
            try Int64.fetchOne(
                db, sql: "SELECT coalesce(max(id), 0) + 1 FROM object_column WHERE type_id = ?", arguments: [typeId])
            ?? 1
        try db.execute(
            sql: "INSERT INTO object_column (type_id, name, kind, id) VALUES (?, ?, ?, ?)",
            arguments: [typeId, key.name, key.kind, n])
        if !key.kind.hasPrefix("LIST ") { try makeStorage(of: key.kind, column: n, type: typeId, db: db) }
        return n
    }

    /// Makes the table of the objects of the registry's type `id`, with no column of its own yet.
    private static func makeTable(type id: Int64, db: any StoreConnection) throws {
        let d = db.dialect
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS t\(id) (realm \(d.columnType("INTEGER")) NOT NULL, \
                key \(d.keyColumnType) NOT NULL, PRIMARY KEY (realm, key))\(d.keyedTableSuffix)
                """)
    }

    /// Makes where the registry's column `n` of kind `kind` of type `typeId` keeps its values: a
    /// column of the type's table, or a list's own table (made only if missing).
    private static func makeStorage(of kind: String, column n: Int64, type typeId: Int64, db: any StoreConnection)
        throws
    {
        let d = db.dialect
        guard kind.hasPrefix("LIST ") else {
            let type = kind == "LINK" ? d.keyColumnType : d.columnType(kind)
            try db.execute(sql: "ALTER TABLE t\(typeId) ADD COLUMN c\(n) \(type)")
            return
        }
        let lt = "t\(typeId)_c\(n)"
        let valueType = kind == "LIST LINK" ? d.keyColumnType : d.columnType(String(kind.dropFirst(5)))
        let integer = d.columnType("INTEGER")
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(lt) (realm \(integer) NOT NULL, owner \(d.keyColumnType) NOT NULL,
                    idx \(integer) NOT NULL, value \(valueType));
                CREATE INDEX IF NOT EXISTS \(lt)_owner ON \(lt)(realm, owner, idx)
                """)
    }

    /// Makes every table and column the registry names, and the indexes the Realms' `schemas`
    /// ask for, in a store whose registry was copied from another (``RealmStore/copy(to:progress:)``).
    func makeRegisteredTables(schemas: [Schema], db: any StoreConnection) throws {
        for id in try Int64.fetchAll(db, sql: "SELECT id FROM object_type ORDER BY id") {
            try Self.makeTable(type: id, db: db)
        }
        for r in try StoreRow.fetchAll(db, sql: "SELECT type_id, id, kind FROM object_column ORDER BY type_id, id") {
            try Self.makeStorage(of: r[2], column: r[1], type: r[0], db: db)
        }
        // What registering the types makes besides: the indexes of links and indexed properties.
        for schema in schemas {
            for t in schema.types {
                try prepare(t, fromProperty: 0, isNew: true, realmId: 0, schema: schema, db: db)
            }
        }
    }

    private static func unregistered(_ t: ObjectSchema, _ p: Property) -> RealmAdapterError {
        RealmAdapterError.storeColumnMissing(type: t.name, property: p.name)
    }
}

/// The tables and columns of one object type's schema (``StoreLayout``).
struct TypeTables: Sendable {
    /// The table of the type's objects.
    let table: String
    /// Per property, in schema order: its column (`key` for the primary key), or nil for a list
    /// or linking objects.
    let columns: [String?]
    /// Per property, in schema order: the list's table, or nil.
    let listTables: [String?]
    /// One object's single-value columns, in schema order, by Realm and key (built once: a
    /// database change reads the object it changes).
    let selectObject: String
    /// Every object's key and single-value columns, in key order, by Realm.
    let selectObjects: String
    /// Whether an object exists, by Realm and key.
    let selectExists: String

    init(table: String, columns: [String?], listTables: [String?]) {
        self.table = table
        self.columns = columns
        self.listTables = listTables
        let values = columns.compactMap { $0 }
        let selected = values.isEmpty ? "1" : values.joined(separator: ", ")
        selectObject = "SELECT \(selected) FROM \(table) WHERE realm = ? AND key = ?"
        selectExists = "SELECT 1 FROM \(table) WHERE realm = ? AND key = ?"
        selectObjects =
            "SELECT \((["key"] + values).joined(separator: ", ")) FROM \(table) WHERE realm = ? ORDER BY key"
    }

    /// The column of the primary key, or of the row key of a type without one.
    static let key = "key"
}
