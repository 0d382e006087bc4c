import RealmAdapter

/// ``DatabaseWrite``s in the Postgres dialect: SQL with `$n` parameters in text format.
enum PostgresWrites {
    static func sql(_ write: DatabaseWrite, schema: String) -> (String, [String?]) {
        let table = PostgresSQL.qualified(schema, write.table)
        func ordered(_ row: DatabaseRow) -> [(String, Value)] { row.values.sorted { $0.key < $1.key } }
        func conditions(_ key: DatabaseRow, from n: Int) -> (String, [String?]) {
            let parts = ordered(key)
            let sql = parts.enumerated().map { "\(PostgresSQL.quote($1.0)) = $\(n + $0)" }.joined(separator: " AND ")
            return (sql, parts.map { PostgresType.encode($0.1) })
        }
        switch write {
        case .upsert(_, let keyColumns, let row):
            let cols = ordered(row)
            let names = cols.map { PostgresSQL.quote($0.0) }.joined(separator: ", ")
            let params = (0..<cols.count).map { "$\($0 + 1)" }.joined(separator: ", ")
            let updates = cols.filter { !keyColumns.contains($0.0) }.map { "\(PostgresSQL.quote($0.0)) = EXCLUDED.\(PostgresSQL.quote($0.0))" }
            let conflict = "ON CONFLICT (\(keyColumns.map(PostgresSQL.quote).joined(separator: ", "))) " + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", "))
            return ("INSERT INTO \(table) (\(names)) VALUES (\(params)) \(conflict)", cols.map { PostgresType.encode($0.1) })
        case .update(_, let key, let values):
            let cols = ordered(values)
            let sets = cols.enumerated().map { "\(PostgresSQL.quote($1.0)) = $\($0 + 1)" }.joined(separator: ", ")
            let (whereSQL, whereParams) = conditions(key, from: cols.count + 1)
            return ("UPDATE \(table) SET \(sets) WHERE \(whereSQL)", cols.map { PostgresType.encode($0.1) } + whereParams)
        case .delete(_, let key):
            let (whereSQL, params) = conditions(key, from: 1)
            return ("DELETE FROM \(table) WHERE \(whereSQL)", params)
        case .deleteAll(_, let matching):
            if matching.values.isEmpty { return ("DELETE FROM \(table)", []) }
            let (whereSQL, params) = conditions(matching, from: 1)
            return ("DELETE FROM \(table) WHERE \(whereSQL)", params)
        }
    }
}
