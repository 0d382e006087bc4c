/// What differs in SQL from one backend to another, for the store's tables, bookkeeping and
/// query engine: every statement core writes is portable SQL or built through this.
///
/// Placeholders are SQLite's (`?`, `?N`); a backend that numbers its own rewrites them.
package protocol StoreDialect: Sendable {
    // MARK: Tables

    /// The column type of a kind of value as the store's registry names it: `INTEGER`, `REAL`,
    /// `TEXT`, `BLOB`.
    func columnType(_ kind: String) -> String
    /// The column type of keys, links and list owners, whose kind varies from row to row (a
    /// type's key may be an int in one Realm and a string in another).
    var keyColumnType: String { get }
    /// A value read from a column of keys, as the store's SQL holds it (as bound by
    /// ``StoreStatement/bind(key:at:)``).
    func storedKey(_ column: StoredValue) -> StoredValue
    /// What follows the definition of a table stored in the order of its primary key.
    var keyedTableSuffix: String { get }
    /// The name of a table private to the connection (a load's notes).
    func temporaryTable(_ name: String) -> String
    /// After rows were copied into `table` with their own values of the column `column`, which
    /// the table generates: a statement that makes the next generated value follow them, or nil
    /// where the backend does so by itself.
    func generatedFollowing(_ table: String, column: String) -> String?

    // MARK: Statements

    /// The most rows one INSERT of many rows carries: its fixed cost (a run in SQLite, a round
    /// trip to a server) weighed against its size.
    var rowsPerInsert: Int { get }
    /// The most parameters one statement may bind.
    var maxParameters: Int { get }

    // MARK: Expressions

    /// An inner join whose left side the planner must read first (SQLite's `CROSS JOIN`): for
    /// a JSON array of paths joined with the Realms, which would otherwise be scanned.
    var orderedJoin: String { get }

    /// The largest of the values.
    func greatest(_ values: [String]) -> String
    /// The smallest of the values.
    func least(_ values: [String]) -> String
    /// The distinct values of `expression` in a group, joined by commas.
    func distinctList(_ expression: String) -> String
    /// `expression`, kept from choosing an index where another serves the statement better.
    func unindexed(_ expression: String) -> String
    /// After a table in FROM: a hint to use this index, where the planner would scan.
    func indexHint(_ index: String) -> String
    /// A FROM item: the elements of the JSON array bound to `parameter`, as `alias.value`, with
    /// their positions from 0 as `alias.key`.
    func jsonArrayElements(_ parameter: String, as alias: String) -> String
    /// Element `index` of a JSON array, as text or as an integer.
    func jsonElement(_ json: String, _ index: Int, integer: Bool) -> String
    /// The value a `LIMIT` parameter takes for no limit.
    var noLimit: StoredValue { get }
    /// What follows a sort key in `ORDER BY` so that NULL sorts first ascending and last
    /// descending, as SQLite sorts it (and Realm: a null is less than any value).
    func nullsSortFirst(descending: Bool) -> String

    // MARK: Conditions of the query engine

    /// The text of a string held in a column of keys (NULL for a key of another kind), for the
    /// text operators.
    func keyText(_ column: String) -> String
    /// A condition that always holds, or never.
    func literal(_ holds: Bool) -> String
    /// `a` and `b` differ, NULL being a value like any other.
    func isDistinct(_ a: String, from b: String) -> String
    /// The condition, false where it is unknown (a NULL compared).
    func definite(_ condition: String) -> String
    /// Text `x` begins with text `y`; the condition and how many times `y`'s value is bound.
    func beginsWith(_ x: String, _ y: String) -> (sql: String, bindings: Int)
    /// Text `x` (column `column`) ends with text `y`; the condition and how many times `y`'s
    /// value is bound.
    func endsWith(_ x: String, _ y: String, column: String) -> (sql: String, bindings: Int)
    /// Text `x` contains text `y`.
    func contains(_ x: String, _ y: String) -> String
    /// Text `x` matches `y`, a pattern in which `*` is any run and `?` any one character, as
    /// ``likePattern(_:)`` made it.
    func like(_ x: String, _ y: String) -> String
    /// Realm's LIKE pattern (`*`, `?`) in the form ``like(_:_:)`` binds.
    func likePattern(_ realmPattern: String) -> String
}

extension StoreDialect {
    /// How many rows of `width` parameters one INSERT carries.
    func rowsPerInsert(width: Int) -> Int { max(1, min(rowsPerInsert, maxParameters / width)) }

    package func greatest(_ values: String...) -> String { greatest(values) }
    package func least(_ values: String...) -> String { least(values) }

    /// The `SET` of an upsert of an adapter's cursor: it never moves back.
    package func cursorNeverBack() -> String {
        "version = \(greatest("adapter_cursor.version", "excluded.version"))"
    }
}
