/// An existing database's tables as a connector reads them for `realm-adapter init`, in terms
/// no database owns: ``StartingConfiguration`` turns it into a configuration.
public struct DatabaseDescription: Sendable, Hashable {
    /// What a column can hold in a Realm, as the connector's type mapping resolves it.
    public enum ColumnType: Sendable, Hashable {
        case scalar(ScalarType)
        /// An array column: a list of primitives.
        case array(ScalarType)
    }

    public struct Column: Sendable, Hashable {
        public var name: String
        /// The database's name of its type (`int4`, `varchar`), for notes.
        public var databaseType: String
        /// Nil when no Realm type holds it (it is left out, with a note).
        public var type: ColumnType?
        public var isNullable: Bool
        /// Holds text of a variable or fixed length (what a legacy `RealmId` column is).
        public var isText: Bool
        /// The database gives it its value (an identity column, a serial, a default sequence).
        public var isGenerated: Bool
        /// The database generates it and refuses a value given in an `INSERT` (SQL Server's
        /// `IDENTITY`): a Realm cannot choose it, so `init` keys such a table by a `RealmId`.
        public var refusesGivenValues: Bool

        public init(
            name: String, databaseType: String, type: ColumnType?, isNullable: Bool, isText: Bool,
            isGenerated: Bool = false, refusesGivenValues: Bool = false
        ) {
            self.name = name
            self.databaseType = databaseType
            self.type = type
            self.isNullable = isNullable
            self.isText = isText
            self.isGenerated = isGenerated
            self.refusesGivenValues = refusesGivenValues
        }
    }

    /// A single-column foreign key (compound ones are not links).
    public struct ForeignKey: Sendable, Hashable {
        public var column: String
        public var table: String
        public var referencedColumn: String

        public init(column: String, table: String, referencedColumn: String) {
            self.column = column
            self.table = table
            self.referencedColumn = referencedColumn
        }
    }

    public struct Table: Sendable, Hashable {
        public var name: String
        /// In the table's order.
        public var columns: [Column]
        /// The primary key's columns in key order; empty when it has none.
        public var primaryKey: [String]
        /// Key columns that are there only because the table is partitioned by them (a
        /// partitioned table's key must include them): the Realm's key is the rest.
        public var partitionColumns: Set<String>
        public var foreignKeys: [ForeignKey]

        public init(
            name: String, columns: [Column], primaryKey: [String], partitionColumns: Set<String> = [],
            foreignKeys: [ForeignKey] = []
        ) {
            self.name = name
            self.columns = columns
            self.primaryKey = primaryKey
            self.partitionColumns = partitionColumns
            self.foreignKeys = foreignKeys
        }

        public func column(_ name: String) -> Column? { columns.first { $0.name == name } }
    }

    /// The database's name (the starting Realm path is `/<name>`).
    public var name: String
    /// The schema (namespace) the tables are in.
    public var schema: String
    public var tables: [Table]
    /// The file, for a database in a file (nil for a server's).
    public var file: String?
    /// Members of the `database` section the connector chose from what it found (SQL Server's
    /// `changeCapture` `triggers` on a server without change tracking), for `init` to write.
    public var settings: [JSONValue.Member] = []

    public init(name: String, schema: String, tables: [Table], file: String? = nil) {
        self.name = name
        self.schema = schema
        self.tables = tables
        self.file = file
    }

    public func table(_ name: String) -> Table? { tables.first { $0.name == name } }
}
