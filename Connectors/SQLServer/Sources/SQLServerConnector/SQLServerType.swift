import RealmAdapter

/// SQL Server's column types against Realm's: the legacy connector's (through its driver,
/// Tedious) plus `datetime2`, `datetimeoffset`, `uniqueidentifier`, `decimal`/`money`,
/// `varbinary(max)`, `nvarchar(max)`, `bit` and `date`.
enum SQLServerType {
    /// The Realm type of a column of type `name` (`INFORMATION_SCHEMA.COLUMNS.DATA_TYPE`), or
    /// nil for one the connector does not carry (`geography`, `sql_variant`, …), which
    /// ``unsupported(_:table:column:)`` explains.
    static func scalar(_ name: String) -> ScalarType? {
        switch name.lowercased() {
        case "bit": .bool
        case "tinyint", "smallint", "int", "bigint": .int
        case "real": .float
        case "float": .double
        case "decimal", "numeric", "money", "smallmoney": .decimal
        case "char", "varchar", "nchar", "nvarchar", "text", "ntext", "xml", "time": .string
        case "uniqueidentifier": .uuid
        case "date", "datetime", "datetime2", "smalldatetime", "datetimeoffset": .date
        case "binary", "varbinary", "image": .data
        default: nil
        }
    }

    /// Why a column of type `name` cannot sync, and what to do.
    static func unsupported(_ name: String, table: String, column: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "Column \(table).\(column) has type \(name), which realm-adapter does not carry (geography, geometry, "
                + "hierarchyid, sql_variant and rowversion are not). Leave it out with mapping.ignoreProperties, "
                + "or map a computed column of a supported type.",
            context: ["db.table": table, "db.column": column])
    }

    /// The column type `createSchema` gives a Realm property of type `s`. `key`: the column is a
    /// key or indexed, so its text must fit an index key (900 bytes: `nvarchar(450)`).
    static func declaration(_ s: ScalarType, key: Bool = false) -> String {
        switch s {
        case .bool: "bit"
        case .int: "bigint"
        case .float: "real"
        case .double: "float"
        case .string: key ? "nvarchar(450)" : "nvarchar(max)"
        case .data: key ? "varbinary(900)" : "varbinary(max)"
        case .date: "datetime2(7)"
        case .decimal: "decimal(38, 10)"
        case .uuid: "uniqueidentifier"
        case .objectId: "char(24)"
        }
    }

    /// How a `SELECT` reads a column of type `name` so that its text is unambiguous: dates in
    /// ISO 8601 (`datetimeoffset` with its offset), UUIDs, decimals and times as text.
    static func selectExpression(_ column: String, type name: String) -> String {
        switch name.lowercased() {
        case "date", "datetime", "datetime2", "smalldatetime": "CONVERT(nvarchar(40), \(column), 126)"
        case "datetimeoffset": "CONVERT(nvarchar(40), \(column), 127)"
        case "decimal", "numeric", "money", "smallmoney", "uniqueidentifier", "time": "CONVERT(nvarchar(60), \(column))"
        case "xml": "CONVERT(nvarchar(max), \(column))"
        default: column
        }
    }
}
