import RealmAdapter

/// The mapped tables in SQL Server: created (`database.createSchema`), read back, checked.
enum SQLServerSchema {
    /// Creates the mapped tables and link tables that are missing, with their keys and foreign
    /// keys. Change tracking needs a primary key: a link table's is (owner, position).
    static func create(_ mapping: Mapping, _ d: SQLServerDialect) -> String {
        var out: [String] = []
        func ifMissing(_ table: String, _ body: String) -> String {
            "IF OBJECT_ID(N'\(d.table(table).replacingOccurrences(of: "'", with: "''"))', N'U') IS NULL \(body)"
        }
        for t in mapping.tables {
            var columns = t.columns.map { c -> String in
                if let dk = t.databaseKey, dk.column == c.column {
                    // The database's own key, generated; the RealmId is empty until the adapter writes one.
                    return "\(d.quote(c.column)) "
                        + (dk.type == .uuid
                            ? "uniqueidentifier NOT NULL DEFAULT NEWID()" : "bigint IDENTITY(1, 1) NOT NULL")
                        + " PRIMARY KEY"
                }
                let isKey = t.keyColumns.contains(c.column) && t.databaseKey == nil
                let scalar: ScalarType =
                    switch c.kind {
                    case .scalar(let s), .array(let s), .link(_, let s): s
                    }
                let required = isKey || !(c.property.isOptional || c.property.type.isList || isLink(c))
                return "\(d.quote(c.column)) \(SQLServerType.declaration(scalar, key: isKey || isLink(c)))"
                    + (required ? " NOT NULL" : " NULL")
            }
            columns += t.pathColumns.map { "\(d.quote($0)) nvarchar(450) NOT NULL" }
            if t.databaseKey == nil {
                columns.append("PRIMARY KEY (\(t.keyColumns.map(d.quote).joined(separator: ", ")))")
            }
            var create = "CREATE TABLE \(d.table(t.table)) (\(columns.joined(separator: ", ")));"
            if t.databaseKey != nil {
                // Unique where set: a UNIQUE constraint would allow one row without a RealmId only.
                let index = d.quote("ux_\(t.table)_" + t.keyColumns.joined(separator: "_"))
                let keys = t.keyColumns.map(d.quote).joined(separator: ", ")
                let set = t.keyColumns.map { "\(d.quote($0)) IS NOT NULL" }.joined(separator: " AND ")
                create =
                    "BEGIN \(create) CREATE UNIQUE INDEX \(index) ON \(d.table(t.table)) (\(keys)) WHERE \(set); END"
            }
            out.append(ifMissing(t.table, create))
        }
        for t in mapping.tables {
            for l in t.linkLists {
                guard let target = mapping.table(forType: l.target) else { continue }
                let owner =
                    t.compoundKey != nil
                    ? "" : " REFERENCES \(d.table(t.table)) (\(d.quote(t.referencedColumn))) ON DELETE CASCADE"
                out.append(
                    ifMissing(
                        l.table,
                        "CREATE TABLE \(d.table(l.table)) ("
                            + "\(d.quote(LinkListMapping.ownerColumn)) "
                            + "\(SQLServerType.declaration(l.ownerKeyType, key: true)) NOT NULL\(owner), "
                            + "\(d.quote(LinkListMapping.indexColumn)) int NOT NULL, "
                            + "\(d.quote(LinkListMapping.targetColumn)) "
                            + "\(SQLServerType.declaration(l.targetKeyType, key: true)) NOT NULL "
                            + "REFERENCES \(d.table(target.table)) (\(d.quote(target.referencedColumn))), "
                            + "PRIMARY KEY (\(d.quote(LinkListMapping.ownerColumn)), "
                            + "\(d.quote(LinkListMapping.indexColumn))));"))
            }
        }
        return out.joined(separator: "\n")
    }

    static func isLink(_ c: ColumnMapping) -> Bool { if case .link = c.kind { true } else { false } }

    /// Per table of `schema`, each column's type, both keyed by ``key(_:)``: SQL Server matches
    /// names case-insensitively (the default collation), so a mapping's `Customer.Name` is the
    /// catalog's `customer.name`.
    static func columnTypes(_ s: SQLServerSession, schema: String) throws -> [String: [String: String]] {
        var rows: [[Value]] = []
        try s.query(SQLServerSQL.columns(schema)) { _, r in rows.append(r) }
        return columnTypes(rows)
    }

    /// ``columnTypes(_:schema:)`` from the rows of ``SQLServerSQL/columns(_:)``.
    static func columnTypes(_ rows: [[Value]]) -> [String: [String: String]] {
        var out: [String: [String: String]] = [:]
        for r in rows {
            guard case .string(let table) = r[0], case .string(let column) = r[1], case .string(let type) = r[2]
            else { continue }
            out[key(table), default: [:]][key(column)] = type
        }
        return out
    }

    /// How a table or column name is looked up in ``columnTypes(_:schema:)``.
    static func key(_ name: String) -> String { name.lowercased() }

    /// The type of `table`.`column` in `types` (``columnTypes(_:schema:)``), or "" if unknown.
    static func type(_ types: [String: [String: String]], _ table: String, _ column: String) -> String {
        types[key(table)]?[key(column)] ?? ""
    }

    /// Every way the database differs from the mapping, one line each.
    static func mismatches(_ mapping: Mapping, types given: [String: [String: String]]) -> [String] {
        // Keyed by ``key(_:)`` whatever the caller's case.
        let types = Dictionary(
            given.map { table, columns in
                (key(table), Dictionary(columns.map { (key($0), $1) }, uniquingKeysWith: { a, _ in a }))
            }, uniquingKeysWith: { a, _ in a })
        var problems: [String] = []
        for t in mapping.tables {
            guard let have = types[key(t.table)] else {
                problems.append(
                    "table \(t.table) (for type \(t.type.name)) does not exist; create it, or set "
                        + "database.createSchema")
                continue
            }
            for c in t.columns where have[key(c.column)] == nil {
                problems.append("column \(t.table).\(c.column) (for \(t.type.name).\(c.property.name)) does not exist")
            }
            for c in t.columns {
                guard let type = have[key(c.column)], SQLServerType.scalar(type) == nil else { continue }
                problems.append(SQLServerType.unsupported(type, table: t.table, column: c.column).message)
            }
            for c in t.pathColumns where have[key(c)] == nil {
                problems.append("column \(t.table).\(c) (of realm.path) does not exist")
            }
            for l in t.linkLists where types[key(l.table)] == nil {
                problems.append("link table \(l.table) (for \(t.type.name).\(l.property.name)) does not exist")
            }
        }
        return problems
    }

    /// The database's change tracking and snapshot isolation (``SQLServerSetup/query``).
    static func setupState(_ s: SQLServerSession) throws -> SQLServerSetup.State {
        var state = SQLServerSetup.State(databaseTracked: false, snapshotIsolation: false, trackedTables: [])
        try s.query(SQLStatement(SQLServerSetup.query)) { set, r in
            switch (set, r.first) {
            case (0, .int(let n)?): state.databaseTracked = n > 0
            case (1, .int(let n)?): state.snapshotIsolation = n == 1
            case (2, .string(let name)?): state.trackedTables.insert(name)
            default: break
            }
        }
        return state
    }
}
