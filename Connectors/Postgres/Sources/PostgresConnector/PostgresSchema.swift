import RealmAdapter

/// Creating tables from the mapping (`createSchema`) and checking that the database matches it.
enum PostgresSchema {
    /// The column type `createSchema` gives a mapped column.
    static func columnType(_ c: ColumnMapping) -> String {
        switch c.kind {
        case .scalar(let s): PostgresType.sqlType(for: s)
        case .link(_, let keyType): PostgresType.sqlType(for: keyType)
        case .array(let s): PostgresType.sqlType(for: s) + "[]"
        }
    }

    /// CREATE TABLE IF NOT EXISTS for every mapped table, then the foreign keys of links.
    static func create(_ mapping: Mapping, schema: String, _ s: PostgresSession) throws {
        try s.execute("CREATE SCHEMA IF NOT EXISTS \(PostgresSQL.quote(schema))")
        for t in mapping.tables {
            var columns = t.columns.map { c in
                let isKey = t.keyColumns.contains(c.column)
                let constraint = isKey && t.compoundKey == nil ? " PRIMARY KEY" : (isKey ? " NOT NULL" : (c.property.isOptional || c.property.type.isList || isLink(c) ? "" : " NOT NULL"))
                return "\(PostgresSQL.quote(c.column)) \(columnType(c))" + constraint
            }
            columns += t.pathColumns.map { "\(PostgresSQL.quote($0)) text NOT NULL" }
            if t.compoundKey != nil { columns.append("PRIMARY KEY (\(t.keyColumns.map(PostgresSQL.quote).joined(separator: ", ")))") }
            try s.execute("CREATE TABLE IF NOT EXISTS \(PostgresSQL.qualified(schema, t.table)) (\(columns.joined(separator: ", ")))")
        }
        for t in mapping.tables {
            for l in t.linkLists {
                guard let target = mapping.table(forType: l.target) else { continue }
                // No key of its own: positions shift as lists change; rows are found by their whole content.
                try s.execute("""
                    CREATE TABLE IF NOT EXISTS \(PostgresSQL.qualified(schema, l.table)) (
                        oid \(PostgresType.sqlType(for: l.ownerKeyType)) NOT NULL REFERENCES \(PostgresSQL.qualified(schema, t.table)) (\(PostgresSQL.quote(t.keyColumn))) ON DELETE CASCADE,
                        idx integer NOT NULL,
                        target \(PostgresType.sqlType(for: l.targetKeyType)) NOT NULL REFERENCES \(PostgresSQL.qualified(schema, target.table)) (\(PostgresSQL.quote(target.keyColumn))) ON DELETE CASCADE);
                    CREATE INDEX IF NOT EXISTS \(PostgresSQL.quote(l.table + "_oid_idx")) ON \(PostgresSQL.qualified(schema, l.table)) (oid, idx)
                    """)
            }
        }
        for t in mapping.tables {
            for c in t.columns {
                guard case .link(let target, _) = c.kind, let tt = mapping.table(forType: target) else { continue }
                let name = "\(t.table)_\(c.column)_fkey"
                let exists = try s.query("SELECT 1 FROM pg_constraint WHERE conname = $1 AND conrelid = $2::regclass", [name, "\(PostgresSQL.qualified(schema, t.table))"]).rows.count == 1
                if !exists {
                    // Realm nulls links to a deleted object; the database does the same.
                    try s.execute("ALTER TABLE \(PostgresSQL.qualified(schema, t.table)) ADD CONSTRAINT \(PostgresSQL.quote(name)) FOREIGN KEY (\(PostgresSQL.quote(c.column))) REFERENCES \(PostgresSQL.qualified(schema, tt.table)) (\(PostgresSQL.quote(tt.keyColumn))) ON DELETE SET NULL")
                }
            }
        }
    }

    /// `ALTER TABLE … ADD COLUMN` for the mapped columns of existing tables that lack them.
    static func addMissingColumns(_ mapping: Mapping, schema: String, customTypes: [String: ScalarType], _ s: PostgresSession) throws {
        let existing = try columnTypes(schema: schema, customTypes: customTypes, s)
        for t in mapping.tables {
            guard let have = existing[t.table] else { continue }  // a new table: create makes it whole
            for c in t.columns where have[c.column] == nil {
                try s.execute("ALTER TABLE \(PostgresSQL.qualified(schema, t.table)) ADD COLUMN IF NOT EXISTS \(PostgresSQL.quote(c.column)) \(columnType(c))")
            }
        }
    }

    static func isLink(_ c: ColumnMapping) -> Bool { if case .link = c.kind { true } else { false } }

    /// The columns of every table in `schema`, with their types (nil: a type realm-adapter does not know).
    static func columnTypes(schema: String, customTypes: [String: ScalarType], _ s: PostgresSession) throws -> [String: [String: PostgresType?]] {
        let rows = try s.query("""
            SELECT c.table_name, c.column_name, c.udt_name, t.oid::int8
            FROM information_schema.columns c JOIN pg_type t ON t.typname = c.udt_name
            JOIN pg_namespace n ON n.oid = t.typnamespace AND n.nspname = c.udt_schema
            WHERE c.table_schema = $1
            """, [schema]).rows
        var columns: [String: [String: PostgresType?]] = [:]
        for r in rows {
            guard let table = r[0], let column = r[1], let udt = r[2], let oid = r[3].flatMap({ UInt32($0) }) else { continue }
            columns[table, default: [:]].updateValue(PostgresType.resolve(oid: oid, name: udt, customTypes: customTypes), forKey: column)
        }
        return columns
    }

    /// Every way the database differs from the mapping, one line each (empty when it matches).
    static func mismatches(_ mapping: Mapping, schema: String, customTypes: [String: ScalarType], _ s: PostgresSession) throws -> [String] {
        let columns = try columnTypes(schema: schema, customTypes: customTypes, s)
        var problems: [String] = []
        for t in mapping.tables {
            guard let have = columns[t.table] else {
                problems.append("table \(schema).\(t.table) (for type \(t.type.name)) does not exist; create it, or set database.createSchema")
                continue
            }
            for c in t.columns {
                guard let found = have[c.column] else {
                    problems.append("column \(t.table).\(c.column) (for \(t.type.name).\(c.property.name)) does not exist")
                    continue
                }
                guard let type = found else {
                    problems.append("column \(t.table).\(c.column) has a type realm-adapter does not know; map it in mapping.customTypes (e.g. {\"my_enum\": \"string\"})")
                    continue
                }
                if c.converter != nil { continue }  // the converter decides
                if !compatible(type.kind, c.kind) {
                    problems.append("column \(t.table).\(c.column) is \(type.name), which cannot hold \(t.type.name).\(c.property.name) (\(c.property.typeString)); change the column or use mapping.convert")
                }
            }
            for l in t.linkLists {
                guard let lt = columns[l.table] else {
                    problems.append("link table \(schema).\(l.table) (for \(t.type.name).\(l.property.name)) does not exist; create it (oid, idx, target), or set database.createSchema")
                    continue
                }
                for c in [LinkListMapping.ownerColumn, LinkListMapping.indexColumn, LinkListMapping.targetColumn] where lt[c] == nil {
                    problems.append("link table \(l.table) has no column \(c) (it needs oid, idx, target)")
                }
            }
            for p in t.pathColumns where have[p] == nil {
                problems.append("column \(t.table).\(p) does not exist, but realm.path \(mapping.path) routes rows by it")
            }
        }
        return problems
    }

    /// Whether values of a column type can carry a property's values both ways.
    static func compatible(_ column: PostgresType.Kind, _ property: ColumnMapping.Kind) -> Bool {
        func scalar(_ c: ScalarType, _ p: ScalarType) -> Bool {
            switch (c, p) {
            case _ where c == p: true
            case (.decimal, .double), (.decimal, .float), (.double, .float), (.float, .double): true  // numeric → double, as the legacy table allows
            case (.uuid, .string): true  // legacy: uuid → string
            default: false
            }
        }
        switch (column, property) {
        case (.scalar(let c), .scalar(let p)), (.scalar(let c), .link(_, let p)): return scalar(c, p)
        case (.array(let c), .array(let p)): return scalar(c, p)
        default: return false
        }
    }
}
