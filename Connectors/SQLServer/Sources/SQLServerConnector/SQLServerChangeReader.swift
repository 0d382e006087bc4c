import Foundation
import RealmAdapter

/// ``ChangeTrackingReader`` over a connection: each round in one SNAPSHOT transaction.
struct SQLServerChangeReader: ChangeTrackingReader {
    let session: SQLServerSession
    let dialect: SQLServerDialect
    /// Per table, the columns read with each change and how (``SQLServerType/selectExpression(_:type:)``).
    let columns: [String: [(name: String, expression: String)]]

    func inSnapshot<T>(_ body: () throws -> T) throws -> T {
        try session.execute("SET TRANSACTION ISOLATION LEVEL SNAPSHOT; BEGIN TRANSACTION;")
        return try Self.ending(session, body)
    }

    /// Runs `body` in the SNAPSHOT transaction open on `session`, then commits it, or rolls it
    /// back if `body` throws; the session reads committed again after.
    static func ending<T>(_ session: SQLServerSession, _ body: () throws -> T) throws -> T {
        do {
            let result = try body()
            try session.execute("COMMIT TRANSACTION; SET TRANSACTION ISOLATION LEVEL READ COMMITTED;")
            return result
        } catch {
            try? session.execute(
                "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION; SET TRANSACTION ISOLATION LEVEL READ COMMITTED;")
            throw error
        }
    }

    /// The version, read together with a table: a snapshot begins at its first read of data,
    /// not at `BEGIN TRANSACTION`, so the version and the tables are of the same instant.
    func currentVersion() throws -> Int64 {
        let r = try session.query(
            dialect.statement(
                "SELECT CHANGE_TRACKING_CURRENT_VERSION(), (SELECT COUNT_BIG(*) FROM \(table: SQLServerSQL.stateTable))"
            ))
        guard case .int(let v)? = r.rows.first?.first else { throw SQLServerError.changeTrackingOff("(the database)") }
        return v
    }

    /// `CHANGE_TRACKING_CURRENT_VERSION()` outside a round (where the stream starts from now).
    static func version(_ s: SQLServerSession, _ d: SQLServerDialect) throws -> Int64 {
        try SQLServerChangeReader(session: s, dialect: d, columns: [:]).currentVersion()
    }

    func minValidVersion(_ table: String) throws -> Int64? {
        let r = try session.query(
            dialect.statement("SELECT CHANGE_TRACKING_MIN_VALID_VERSION(OBJECT_ID(\(dialect.table(table))))"))
        guard case .int(let v)? = r.rows.first?.first else { return nil }
        return v
    }

    func changes(_ table: TrackedTable, since version: Int64) throws -> [TrackedChange] {
        let read = columns[table.name] ?? []
        let statement = SQLServerSQL.changes(
            table.name, keyColumns: table.keyColumns, columns: read.map(\.name),
            expressions: read.map(\.expression), since: version, dialect)
        let k = table.keyColumns.count
        var out: [TrackedChange] = []
        try session.query(statement) { _, v in
            guard case .string(let op) = v[0], let operation = op.first else { return }
            let context: Data? = if case .data(let d) = v[1] { d } else { nil }
            let key = DatabaseRow(Dictionary(uniqueKeysWithValues: zip(table.keyColumns, v[2..<(2 + k)])))
            let exists = v[2 + k] == .int(1)
            let row = exists ? DatabaseRow(Dictionary(uniqueKeysWithValues: zip(read.map(\.name), v[(3 + k)...]))) : nil
            out.append(TrackedChange(operation: operation, context: context, key: key, row: row))
        }
        return out
    }
}
