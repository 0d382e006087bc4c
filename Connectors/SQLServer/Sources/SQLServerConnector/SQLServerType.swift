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

    /// How a `SELECT` reads a column of type `name` so that its text is exact and parses: dates
    /// in ISO 8601 (`datetimeoffset` with its offset), UUIDs, decimals and times as text.
    ///
    /// - `money`/`smallmoney` go through `decimal(19, 4)`: their own text (style 0) has two
    ///   decimals, and Babelfish pads it with a leading space.
    /// - `datetimeoffset` style 127 has a space before the offset on Babelfish
    ///   (`2024-05-01 10:20:30.123457 +02:00`), which ISO 8601 does not allow: it is taken out.
    ///   SQL Server writes `2024-05-01T10:20:30.1234567+02:00` (or `…Z`), which stays as it is.
    static func selectExpression(_ column: String, type name: String) -> String {
        switch name.lowercased() {
        case "date", "datetime", "datetime2", "smalldatetime": "CONVERT(nvarchar(40), \(column), 126)"
        case "datetimeoffset":
            "REPLACE(REPLACE(CONVERT(nvarchar(40), \(column), 127), N' +', N'+'), N' -', N'-')"
        case "money", "smallmoney": "CONVERT(nvarchar(60), CAST(\(column) AS decimal(19, 4)))"
        case "decimal", "numeric", "uniqueidentifier", "time": "CONVERT(nvarchar(60), \(column))"
        case "xml": "CONVERT(nvarchar(max), \(column))"
        default: column
        }
    }

    /// The declared type of a column from its `INFORMATION_SCHEMA.COLUMNS` row
    /// (``SQLServerSQL/declaredTypes(_:)``): `nvarchar(450)`, `decimal(19, 4)`, `datetime2(7)`.
    static func declared(_ name: String, length: Int64?, precision: Int64?, scale: Int64?, seconds: Int64?)
        -> String
    {
        let type = name.lowercased()
        switch type {
        case "char", "varchar", "nchar", "nvarchar", "binary", "varbinary":
            return "\(type)(\(length.map { $0 < 0 ? "max" : String($0) } ?? "max"))"
        case "decimal", "numeric": return "\(type)(\(precision ?? 38), \(scale ?? 0))"
        case "datetime2", "datetimeoffset", "time": return seconds.map { "\(type)(\($0))" } ?? type
        default: return type
        }
    }
}
