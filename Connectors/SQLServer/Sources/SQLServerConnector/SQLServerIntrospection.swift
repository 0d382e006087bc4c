import RealmAdapter

/// Reads an existing database's tables for `realm-adapter init`; the core's
/// ``StartingConfiguration`` turns them into a configuration.
enum SQLServerIntrospection {
    /// The base tables of `schema` (not the adapter's own), their columns with the Realm types
    /// the connector maps them to, primary keys and single-column foreign keys, from
    /// ``SQLServerSQL/columns(_:)``, ``SQLServerSQL/keys(_:)`` and ``SQLServerSQL/foreignKeys(_:)``.
    static func describe(
        columns: [[Value]], keys: [[Value]], foreignKeys: [[Value]], schema: String, databaseName: String
    ) -> DatabaseDescription {
        var tables: [DatabaseDescription.Table] = []
        for r in columns {
            guard case .string(let t) = r[0], case .string(let c) = r[1], case .string(let type) = r[2],
                !t.hasPrefix("realm_adapter_")
            else { continue }
            let column = DatabaseDescription.Column(
                name: c, databaseType: type, type: SQLServerType.scalar(type).map { .scalar($0) },
                isNullable: r[3] == .int(1),
                isText: ["char", "varchar", "nchar", "nvarchar", "text", "ntext"].contains(type.lowercased()),
                isGenerated: r[4] == .int(1) || r[5] == .int(1),
                // An IDENTITY refuses a given value (Msg 544) unless IDENTITY_INSERT is on.
                refusesGivenValues: r[4] == .int(1))
            if tables.last?.name != t { tables.append(.init(name: t, columns: [], primaryKey: [])) }
            tables[tables.count - 1].columns.append(column)
        }
        // SQL Server compares names by the database's collation, case-insensitively by default, and
        // some catalog views answer in another case than INFORMATION_SCHEMA.COLUMNS (Babelfish's
        // KEY_COLUMN_USAGE and sys.foreign_key_columns answer lower-cased names): every answer is
        // matched to the columns' own spelling, case-insensitively.
        let index = Dictionary(
            tables.enumerated().map { ($1.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        func column(_ name: String, of table: Int) -> String? {
            tables[table].columns.first { $0.name.lowercased() == name.lowercased() }?.name
        }
        for r in keys {
            guard case .string(let t) = r[0], case .string(let kind) = r[2], case .string(let c) = r[3],
                kind == "PRIMARY KEY", let i = index[t.lowercased()], let name = column(c, of: i)
            else { continue }
            tables[i].primaryKey.append(name)
        }
        for r in foreignKeys {
            guard case .string(let t) = r[0], case .string(let c) = r[1], case .string(let target) = r[2],
                case .string(let referenced) = r[3], let i = index[t.lowercased()], let name = column(c, of: i),
                let j = index[target.lowercased()], let referencedName = column(referenced, of: j)
            else { continue }
            tables[i].foreignKeys.append(
                .init(column: name, table: tables[j].name, referencedColumn: referencedName))
        }
        return DatabaseDescription(name: databaseName, schema: schema, tables: tables)
    }

    /// ``describe(columns:keys:foreignKeys:schema:databaseName:)`` from a connection.
    static func describe(_ s: SQLServerSession, schema: String, databaseName: String) throws -> DatabaseDescription {
        describe(
            columns: try s.query(SQLServerSQL.columns(schema)).rows, keys: try s.query(SQLServerSQL.keys(schema)).rows,
            foreignKeys: try s.query(SQLServerSQL.foreignKeys(schema)).rows, schema: schema,
            databaseName: databaseName)
    }
}
