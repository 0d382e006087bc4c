import RealmAdapter

/// Reads an existing database's tables for `realm-adapter init`; the core's
/// ``StartingConfiguration`` turns them into a configuration.
enum PostgresIntrospection {
    /// The ordinary and partitioned tables of `schema` (not the adapter's own), their columns
    /// with types resolved as the connector maps them, keys and single-column foreign keys.
    static func describe(_ s: PostgresSession, schema: String, databaseName: String) throws -> DatabaseDescription {
        let catalog = try PostgresTypeCatalog.load(s)
        var tables: [DatabaseDescription.Table] = []
        for r in try s.query(
            """
            SELECT c.relname, a.attname, t.typname, t.oid::int8, NOT a.attnotnull,
                   a.attidentity <> '' OR a.attgenerated <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%', false)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            JOIN pg_type t ON t.oid = a.atttypid
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
              AND c.relname NOT LIKE 'realm\\_adapter\\_%'
            ORDER BY c.relname, a.attnum
            """, [schema]
        ).rows {
            guard let t = r[0], let c = r[1], let typ = r[2], let oid = r[3].flatMap({ UInt32($0) }) else { continue }
            let type: DatabaseDescription.ColumnType? =
                switch catalog.resolve(oid: oid, name: typ, customTypes: [:])?.kind {
                case .scalar(let s)?: .scalar(s)
                case .array(let s)?: .array(s)
                case nil: nil
                }
            let column = DatabaseDescription.Column(
                name: c, databaseType: typ, type: type, isNullable: r[4] == "t",
                isText: ["text", "varchar", "bpchar"].contains(typ), isGenerated: r[5] == "t")
            if tables.last?.name != t { tables.append(.init(name: t, columns: [], primaryKey: [])) }
            tables[tables.count - 1].columns.append(column)
        }
        let index = Dictionary(uniqueKeysWithValues: tables.enumerated().map { ($1.name, $0) })
        // A partitioned table's key must include its partition key; the Realm's key is the rest.
        for r in try s.query(
            """
            SELECT c.relname, a.attname FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(p.partattrs)
            WHERE n.nspname = $1
            """, [schema]
        ).rows {
            if let t = r[0], let c = r[1], let i = index[t] { tables[i].partitionColumns.insert(c) }
        }
        for r in try s.query(
            """
            SELECT c.relname, k.contype::text,
                   array_to_string(ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                       JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i), ','),
                   coalesce(f.relname, ''),
                   coalesce(array_to_string(ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                       JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i), ','), '')
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_class f ON f.oid = k.confrelid
            WHERE n.nspname = $1 AND k.contype IN ('p', 'f')
            ORDER BY c.relname, k.conname
            """, [schema]
        ).rows {
            guard let t = r[0], let i = index[t], let kind = r[1],
                let columns = r[2]?.split(separator: ",").map(String.init)
            else { continue }
            if kind == "p" { tables[i].primaryKey = columns }
            if kind == "f", columns.count == 1, let target = r[3], let targetColumns = r[4]?.split(separator: ","),
                targetColumns.count == 1
            {
                tables[i].foreignKeys.removeAll { $0.column == columns[0] }  // the last by name, as before
                tables[i].foreignKeys.append(
                    .init(column: columns[0], table: target, referencedColumn: String(targetColumns[0])))
            }
        }
        return DatabaseDescription(name: databaseName, schema: schema, tables: tables)
    }
}
