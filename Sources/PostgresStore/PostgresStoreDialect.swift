import RealmAdapter

/// Postgres's SQL for the store: typed columns with SQLite's byte order for text (`COLLATE "C"`),
/// keys as tagged `bytea` (``PostgresKeyCodec``), JSON arrays through `json_array_elements`,
/// no planner hints, `LIKE` for Realm's patterns.
package struct PostgresStoreDialect: StoreDialect {
    package init() {}

    package func columnType(_ kind: String) -> String {
        switch kind {
        case "INTEGER": "bigint"
        case "REAL": "double precision"
        case "TEXT": #"text COLLATE "C""#
        default: "bytea"
        }
    }
    package var keyColumnType: String { "bytea" }
    /// The key a column of keys holds (``PostgresKeyCodec``); a column read as anything but its
    /// bytes is returned as it is.
    package func storedKey(_ column: StoredValue) -> StoredValue {
        guard case .blob(let bytes) = column, let key = try? PostgresKeyCodec.decode(bytes) else { return column }
        return key
    }
    package var keyedTableSuffix: String { "" }
    /// Each statement is a round trip; long ones are sent as `COPY` (``PostgresCopyInsert``).
    package var rowsPerInsert: Int { 2000 }
    /// The protocol's limit (a 16-bit count).
    package var maxParameters: Int { 65535 }
    package func temporaryTable(_ name: String) -> String { "pg_temp.\(name)" }
    /// An identity column's sequence, moved past the largest value (rows given their own values
    /// do not move it).
    package func generatedFollowing(_ table: String, column: String) -> String? {
        "SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), coalesce(max(\(column)), 0) + 1, false) "
            + "FROM \(table)"
    }

    package var orderedJoin: String { "JOIN" }
    package func greatest(_ values: [String]) -> String { "greatest(\(values.joined(separator: ", ")))" }
    package func least(_ values: [String]) -> String { "least(\(values.joined(separator: ", ")))" }
    package func distinctList(_ expression: String) -> String { "string_agg(DISTINCT \(expression), ',')" }
    package func unindexed(_ expression: String) -> String { expression }
    package func indexHint(_ index: String) -> String { "" }
    /// Each element's text as `value` (a string's own text, an array's JSON), its position from 0 as `key`.
    package func jsonArrayElements(_ parameter: String, as alias: String) -> String {
        """
        (SELECT e.value #>> '{}' AS value, e.ord - 1 AS key
         FROM json_array_elements(\(parameter)::json) WITH ORDINALITY AS e(value, ord)) AS \(alias)
        """
    }
    package func jsonElement(_ json: String, _ index: Int, integer: Bool) -> String {
        "((\(json))::json ->> \(index))" + (integer ? "::bigint" : "")
    }
    /// `LIMIT NULL` is no limit.
    package var noLimit: StoredValue { .null }
    /// Postgres sorts NULL as greater than any value: said otherwise.
    package func nullsSortFirst(descending: Bool) -> String { descending ? " NULLS LAST" : " NULLS FIRST" }

    /// A string key's UTF-8 after its tag (``PostgresKeyCodec``); NULL for other keys.
    package func keyText(_ column: String) -> String {
        "(CASE WHEN get_byte(\(column), 0) = 2 THEN convert_from(substring(\(column) FROM 2), 'UTF8') END)"
    }
    package func literal(_ holds: Bool) -> String { holds ? "true" : "false" }
    package func isDistinct(_ a: String, from b: String) -> String { "\(a) IS DISTINCT FROM \(b)" }
    package func definite(_ condition: String) -> String { "coalesce(\(condition), false)" }
    package func beginsWith(_ x: String, _ y: String) -> (sql: String, bindings: Int) { ("starts_with(\(x), \(y))", 1) }
    package func endsWith(_ x: String, _ y: String, column: String) -> (sql: String, bindings: Int) {
        ("right(\(x), length(\(y))) = \(y)", 2)
    }
    package func contains(_ x: String, _ y: String) -> String { "strpos(\(x), \(y)) > 0" }
    package func like(_ x: String, _ y: String) -> String { "\(x) LIKE \(y)" }
    /// Realm's `*` and `?` become `%` and `_`; `LIKE`'s own `%`, `_` and escape `\` are escaped.
    package func likePattern(_ realmPattern: String) -> String {
        var out = ""
        for c in realmPattern {
            switch c {
            case "\\", "%", "_": out += "\\\(c)"
            case "*": out += "%"
            case "?": out += "_"
            default: out.append(c)
            }
        }
        return out
    }
}
