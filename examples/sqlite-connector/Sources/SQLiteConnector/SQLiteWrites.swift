import GRDB
import RealmAdapter

/// The SQLite dialect of the statements the core builds (``DatabaseWrite/statement(_:conflictTarget:)``):
/// `?` parameters, values bound as SQLite's storage classes (``SQLiteValues``).
struct SQLiteDialect: SQLDialect {
    func quote(_ identifier: String) -> String { SQLiteSQL.quote(identifier) }
    func table(_ name: String) -> String { SQLiteSQL.quote(name) }
    func parameter(_ n: Int) -> String { "?" }
}

extension Database {
    /// Runs the statement of `write` (``DatabaseWrite/closeGaps(table:)`` has none here: lists of
    /// links, whose link tables it renumbers, are refused at prepare).
    func execute(_ write: DatabaseWrite) throws {
        guard let s = write.statement(SQLiteDialect()) else { return }
        try execute(sql: s.text, arguments: StatementArguments(s.values.map(SQLiteValues.bindable)))
    }
}
