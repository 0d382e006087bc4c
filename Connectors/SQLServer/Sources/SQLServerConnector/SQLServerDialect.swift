import RealmAdapter

/// T-SQL as ``SQL`` and ``DatabaseWrite/statement(_:conflictTarget:)`` render it: names in
/// brackets (a `]` doubled, so `-`, spaces and `]` work), tables qualified by the schema,
/// parameters `@p1`, `@p2`, … numbered from `firstParameter` (several statements share one
/// `sp_executesql` call).
struct SQLServerDialect: SQLDialect {
    let schema: String
    var firstParameter = 1

    func quote(_ identifier: String) -> String { identifier.sqlQuoted("[", "]") }
    func table(_ name: String) -> String { quote(schema) + "." + quote(name) }
    func parameter(_ n: Int) -> String { "@p\(firstParameter + n - 1)" }
}
