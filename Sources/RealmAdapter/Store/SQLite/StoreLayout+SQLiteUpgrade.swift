import GRDB

extension StoreLayout {
    /// Creates the registry, and moves a store of the layout before it (tables per Realm:
    /// `r{realm}_t{k}` with a column `p{j}` per property and `_key` for row keys, lists in
    /// `r{realm}_t{k}_p{j}`) into tables by type. Runs once, as a store migration.
    static func upgrade(_ db: Database) throws {
        let connection = SQLiteConnection(db: db)
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS object_type (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
                CREATE TABLE IF NOT EXISTS object_column (type_id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
                    id INTEGER NOT NULL, PRIMARY KEY (type_id, name, kind)) WITHOUT ROWID
                """)
        let layout = StoreLayout()
        let realms = try StoreRow.fetchAll(connection, sql: "SELECT id, schema FROM realm ORDER BY id")
        for row in realms {
            let realm: Int64 = row[0]
            let schema = try Schema(
                json: try JSONValue(parsing: row[1] as String, errorCode: .storeUnavailable), path: "stored schema")
            for (k, t) in schema.types.enumerated() {
                let old = "r\(realm)_t\(k)"
                guard try db.tableExists(old) else { continue }
                try layout.prepare(t, fromProperty: 0, isNew: true, realmId: realm, schema: schema, db: connection)
                let tt = try layout.tables(of: t, db: connection)
                var from = [
                    t.primaryKey.flatMap { pk in t.properties.firstIndex { $0.name == pk } }.map { "p\($0)" } ?? "_key"
                ]
                var to = [TypeTables.key]
                for (j, p) in t.properties.enumerated() where p.name != t.primaryKey {
                    if let column = tt.columns[j] {
                        from.append("p\(j)")
                        to.append(column)
                    }
                    if let list = tt.listTables[j] {
                        try db.execute(
                            sql:
                                "INSERT INTO \(list) (realm, owner, idx, value) SELECT ?, owner, idx, value "
                                + "FROM \(old)_p\(j) ORDER BY rowid",
                            arguments: [realm])
                        try db.execute(sql: "DROP TABLE \(old)_p\(j)")
                    }
                }
                try db.execute(
                    sql:
                        "INSERT INTO \(tt.table) (realm, \(to.joined(separator: ", "))) SELECT ?, "
                        + "\(from.joined(separator: ", ")) FROM \(old)",
                    arguments: [realm])
                try db.execute(sql: "DROP TABLE \(old)")
            }
        }
    }
}
