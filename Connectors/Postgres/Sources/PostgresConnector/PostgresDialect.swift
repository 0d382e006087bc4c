import RealmAdapter

/// The Postgres dialect of the statements the core builds (``DatabaseWrite/statement(_:conflictTarget:)``):
/// tables qualified by the configured schema, parameters `$n`.
struct PostgresDialect: SQLDialect {
    let schema: String

    func quote(_ identifier: String) -> String { PostgresSQL.quote(identifier) }
    func table(_ name: String) -> String { PostgresSQL.qualified(schema, name) }
    func parameter(_ n: Int) -> String { "$\(n)" }
}
