import Foundation

/// SQLite's SQL: untyped columns, `WITHOUT ROWID`, JSON functions, planner hints, GLOB.
struct SQLiteDialect: StoreDialect {
    func columnType(_ kind: String) -> String { kind }
    /// No type: each value keeps its own (SQLite's "BLOB" affinity changes nothing).
    var keyColumnType: String { "" }
    var keyedTableSuffix: String { " WITHOUT ROWID" }
    func temporaryTable(_ name: String) -> String { "temp.\(name)" }
    /// A new row's `INTEGER PRIMARY KEY` is past the largest already.
    func generatedFollowing(_ table: String, column: String) -> String? { nil }
    func storedKey(_ column: StoredValue) -> StoredValue { column }
    /// NULL is less than any value: first ascending, last descending.
    func nullsSortFirst(descending: Bool) -> String { "" }
    /// A run costs about half of a narrow row's: past 32 rows, longer statements gain little.
    var rowsPerInsert: Int { 32 }
    /// The limit before SQLite 3.32 (newer ones allow 32,766).
    var maxParameters: Int { 999 }

    var orderedJoin: String { "CROSS JOIN" }
    func greatest(_ values: [String]) -> String { "max(\(values.joined(separator: ", ")))" }
    func least(_ values: [String]) -> String { "min(\(values.joined(separator: ", ")))" }
    func distinctList(_ expression: String) -> String { "group_concat(DISTINCT \(expression))" }
    func unindexed(_ expression: String) -> String { "+\(expression)" }
    func indexHint(_ index: String) -> String { "INDEXED BY \(index)" }
    func jsonArrayElements(_ parameter: String, as alias: String) -> String { "json_each(\(parameter)) \(alias)" }
    func jsonElement(_ json: String, _ index: Int, integer: Bool) -> String { "\(json) ->> \(index)" }
    var noLimit: StoredValue { .integer(-1) }

    /// Keys are kept as they are: a string key is text.
    func keyText(_ column: String) -> String { column }
    func literal(_ holds: Bool) -> String { holds ? "1" : "0" }
    func isDistinct(_ a: String, from b: String) -> String { "\(a) IS NOT \(b)" }
    func definite(_ condition: String) -> String { "coalesce(\(condition), 0)" }
    func beginsWith(_ x: String, _ y: String) -> (sql: String, bindings: Int) {
        ("substr(\(x), 1, length(?)) = \(y)", 2)
    }
    func endsWith(_ x: String, _ y: String, column: String) -> (sql: String, bindings: Int) {
        ("\(column) IS NOT NULL AND (length(?) = 0 OR substr(\(x), -length(?)) = \(y))", 3)
    }
    func contains(_ x: String, _ y: String) -> String { "instr(\(x), \(y)) > 0" }
    /// Realm's `*` and `?` are GLOB's; GLOB's own `[` is escaped.
    func like(_ x: String, _ y: String) -> String { "\(x) GLOB \(y)" }
    func likePattern(_ realmPattern: String) -> String { realmPattern.replacingOccurrences(of: "[", with: "[[]") }
}
