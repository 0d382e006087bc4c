import GRDB
import RealmAdapter

/// One consistent read of the database (a GRDB snapshot: a read transaction held open).
final class SQLiteLoadSnapshot: LoadSnapshot, @unchecked Sendable {
    // @unchecked: the loader calls it from one thread at a time; the snapshot serializes reads.
    let snapshot: DatabaseSnapshot
    let mapping: Mapping
    let handOffPosition: String?

    init(snapshot: DatabaseSnapshot, mapping: Mapping, handOffPosition: String?) {
        self.snapshot = snapshot
        self.mapping = mapping
        self.handOffPosition = handOffPosition
    }

    func estimatedRows(_ table: String) throws -> Int? {
        try snapshot.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLiteSQL.quote(table))") }
    }

    func distinctCount(_ table: String, columns: [String]) throws -> Int {
        let list = columns.map(SQLiteSQL.quote).joined(separator: ", ")
        return try snapshot.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM (SELECT DISTINCT \(list) FROM \(SQLiteSQL.quote(table)))")
                ?? 0
        }
    }

    func rows(_ table: String, columns: [String], orderedBy: [String], _ body: ([Value]) throws -> Void) throws {
        let kinds = columns.map { mapping.table(named: table)?.column(named: $0)?.kind }
        var sql = "SELECT \(columns.map(SQLiteSQL.quote).joined(separator: ", ")) FROM \(SQLiteSQL.quote(table))"
        if !orderedBy.isEmpty { sql += " ORDER BY " + orderedBy.map(SQLiteSQL.quote).joined(separator: ", ") }
        try snapshot.read { db in
            let cursor = try Row.fetchCursor(db, sql: sql)
            while let r = try cursor.next() {
                try body(kinds.indices.map { SQLiteValues.value(r[$0] as DatabaseValue, kind: kinds[$0]) })
            }
        }
    }

    func linkRows(
        _ list: LinkListMapping, owner: TableMapping, ownerColumns: [String], _ body: ([Value]) throws -> Void
    ) throws {
        throw SQLiteConnector.unsupported("load lists of links")
    }

    func writeRealmIds(_ assignments: [RealmIdAssignment]) throws {
        guard assignments.isEmpty else {
            throw SQLiteConnector.unsupported("support databasePrimaryKey")
        }
    }

    func finish() throws {}
}
