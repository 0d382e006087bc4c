import GRDB
import RealmAdapter

/// ``DatabaseWrite``s in the SQLite dialect: one statement each, `?` parameters.
enum SQLiteWrites {
    struct Statement {
        var sql: String
        var arguments: [(any DatabaseValueConvertible)?]
    }

    static func statement(_ write: DatabaseWrite) -> Statement {
        let table = SQLiteSQL.quote(write.table)
        func ordered(_ row: DatabaseRow) -> [(String, Value)] { row.values.sorted { $0.key < $1.key } }
        func placeholders(_ row: DatabaseRow) -> [String] { ordered(row).map { placeholder(row.references[$0.0]) } }
        func conditions(_ key: DatabaseRow) -> (String, [(any DatabaseValueConvertible)?]) {
            let parts = ordered(key)
            let sql = parts.map { "\(SQLiteSQL.quote($0.0)) IS \(placeholder(key.references[$0.0]))" }.joined(
                separator: " AND ")
            return (sql, parts.map { SQLiteValues.bindable($0.1) })
        }
        switch write {
        case .upsert(_, let keyColumns, let row):
            let cols = ordered(row)
            let names = cols.map { SQLiteSQL.quote($0.0) }.joined(separator: ", ")
            let updates = cols.filter { !keyColumns.contains($0.0) }.map {
                "\(SQLiteSQL.quote($0.0)) = excluded.\(SQLiteSQL.quote($0.0))"
            }
            let conflict =
                "ON CONFLICT (\(keyColumns.map(SQLiteSQL.quote).joined(separator: ", "))) "
                + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", "))
            return Statement(
                sql:
                    "INSERT INTO \(table) (\(names)) VALUES (\(placeholders(row).joined(separator: ", "))) \(conflict)",
                arguments: cols.map { SQLiteValues.bindable($0.1) })
        case .update(_, let key, let values):
            let cols = ordered(values)
            let sets = cols.map { "\(SQLiteSQL.quote($0.0)) = \(placeholder(values.references[$0.0]))" }.joined(
                separator: ", ")
            let (whereSQL, whereArguments) = conditions(key)
            return Statement(
                sql: "UPDATE \(table) SET \(sets) WHERE \(whereSQL)",
                arguments: cols.map { SQLiteValues.bindable($0.1) } + whereArguments)
        case .delete(_, let key):
            let (whereSQL, arguments) = conditions(key)
            return Statement(sql: "DELETE FROM \(table) WHERE \(whereSQL)", arguments: arguments)
        case .deleteAll(_, let matching):
            if matching.values.isEmpty { return Statement(sql: "DELETE FROM \(table)", arguments: []) }
            let (whereSQL, arguments) = conditions(matching)
            return Statement(sql: "DELETE FROM \(table) WHERE \(whereSQL)", arguments: arguments)
        case .insert(_, let row):
            let cols = ordered(row)
            return Statement(
                sql: "INSERT INTO \(table) (\(cols.map { SQLiteSQL.quote($0.0) }.joined(separator: ", "))) "
                    + "VALUES (\(placeholders(row).joined(separator: ", ")))",
                arguments: cols.map { SQLiteValues.bindable($0.1) })
        case .closeGaps:
            // Lists of links are refused at prepare: there is no link table to renumber.
            return Statement(sql: "SELECT 1", arguments: [])
        }
    }

    /// `?`, or the database key that a RealmId parameter refers to.
    static func placeholder(_ reference: KeyReference?) -> String {
        guard let r = reference else { return "?" }
        return
            "(SELECT \(SQLiteSQL.quote(r.column)) FROM \(SQLiteSQL.quote(r.table)) "
            + "WHERE \(SQLiteSQL.quote(r.byColumn)) = ?)"
    }
}
