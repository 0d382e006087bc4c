/// A database row as the mapping engine sees it: column → typed value.
///
/// `missing` lists columns whose value the change did not carry (Postgres sends an unchanged
/// TOASTed value as "unchanged", not as a value): they must keep their current value.
public struct DatabaseRow: Hashable, Sendable {
    public var values: [String: Value]
    public var missing: Set<String>
    /// Columns whose value is to be looked up in the database as the write runs: the value
    /// given is the target's RealmId, the column gets its database key (`databasePrimaryKey`).
    public var references: [String: KeyReference] = [:]
    /// Columns whose value the connector could not read as a Realm value (a numeric NaN, an
    /// infinite timestamp), with why (naming the type, never the value): the mapping makes the
    /// row a bad row, named by table, column and key, if it maps the column.
    public var unreadable: [String: String] = [:]

    public init(_ values: [String: Value] = [:], missing: Set<String> = []) {
        self.values = values
        self.missing = missing
    }

    public subscript(column: String) -> Value? {
        get { values[column] }
        set { values[column] = newValue }
    }
}

/// "The `column` of the row of `table` whose `byColumn` holds the value": a database key found
/// by a RealmId, inside the statement that needs it (so that a row inserted earlier in the same
/// database transaction is found).
public struct KeyReference: Hashable, Sendable {
    public var table: String
    public var column: String
    public var byColumn: String

    public init(table: String, column: String, byColumn: String) {
        self.table = table
        self.column = column
        self.byColumn = byColumn
    }
}

/// One row change of a committed database transaction, connector-neutral. `table` is the
/// table's name in the configured database schema (namespace).
public enum RowChange: Hashable, Sendable {
    case insert(table: String, row: DatabaseRow)
    /// `oldKey` is given when the key changed (or the whole old row, with a full replica identity).
    case update(table: String, row: DatabaseRow, oldKey: DatabaseRow?)
    /// `key` holds at least the key columns.
    case delete(table: String, key: DatabaseRow)
    case truncate(tables: [String])

    public var tables: [String] {
        switch self {
        case .insert(let t, _), .update(let t, _, _), .delete(let t, _): [t]
        case .truncate(let ts): ts
        }
    }
}
