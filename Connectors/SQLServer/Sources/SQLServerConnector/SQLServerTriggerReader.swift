import Foundation
import RealmAdapter

/// ``ChangeTrackingReader`` over the trigger log (``SQLServerTriggers``): versions are log
/// numbers, and a round reads the log up to a watermark below which nothing is in flight.
///
/// A round: the largest number (read committed); if it is past ``since``, the reader waits
/// for every gate row in turn (older transactions end), then holds them all on ``gate``, a
/// second connection, while the SNAPSHOT transaction starts on ``session`` and reads the
/// watermark, and lets go. The snapshot then holds exactly the transactions numbered up to the
/// watermark: every one of them committed before it, none after it drew a number.
final class SQLServerTriggerReader: ChangeTrackingReader {
    let session: SQLServerSession
    let gate: SQLServerSession
    let dialect: SQLServerDialect
    /// Per table, the columns read with each change and how (``SQLServerType/selectExpression(_:type:)``).
    let columns: [String: [(name: String, expression: String)]]
    /// Per table, each key column's declared type (`nvarchar(450)`), to read the log's parts as.
    let keyTypes: [String: [String: String]]
    /// The tables whose capture trigger is installed and enabled (read at the start of a round).
    private var captured: Set<String> = []
    private var watermark: Int64 = 0
    let since: Int64

    init(
        session: SQLServerSession, gate: SQLServerSession, dialect: SQLServerDialect,
        columns: [String: [(name: String, expression: String)]], keyTypes: [String: [String: String]], since: Int64
    ) {
        self.session = session
        self.gate = gate
        self.dialect = dialect
        self.columns = columns
        self.keyTypes = keyTypes
        self.since = since
    }

    func inSnapshot<T>(_ body: () throws -> T) throws -> T {
        let last = try Self.number(session, SQLServerTriggers.lastNumber(dialect))
        guard last > since else {
            watermark = last
            return try body()
        }
        captured = try Self.captured(session, dialect)
        watermark = try Self.snapshotStart(session, gate: gate, dialect)
        return try SQLServerChangeReader.ending(session, body)
    }

    /// Begins a SNAPSHOT transaction on `session` that holds exactly the log up to the number it
    /// returns (the loader's hand-off uses it too). `gate` is another connection's session.
    static func snapshotStart(_ session: SQLServerSession, gate: SQLServerSession, _ d: SQLServerDialect) throws
        -> Int64
    {
        // Usually no transaction holds a gate row for long: the gate is held at once. When one
        // does, writers would wait behind the reader; it lets go, waits for each row in turn
        // while holding none, and takes the gate then.
        try gate.execute("SET LOCK_TIMEOUT \(SQLServerTriggers.holdTimeoutMs);")
        do {
            try gate.execute(SQLServerTriggers.holdGate(d))
            try gate.execute("SET LOCK_TIMEOUT -1;")
        } catch let e as SQLServerError where e.isLockTimeout {
            try gate.execute("IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION; SET LOCK_TIMEOUT -1;")
            try gate.execute(SQLServerTriggers.passGate(d))
            try gate.execute(SQLServerTriggers.holdGate(d))
        }
        do {
            try session.execute("SET TRANSACTION ISOLATION LEVEL SNAPSHOT; BEGIN TRANSACTION;")
            // The snapshot begins at this first read, while no transaction can draw a number.
            let watermark = try number(session, SQLServerTriggers.lastNumber(d))
            try gate.execute("COMMIT TRANSACTION;")
            return watermark
        } catch {
            try? gate.execute("IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;")
            try? session.execute(
                "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION; SET TRANSACTION ISOLATION LEVEL READ COMMITTED;")
            throw error
        }
    }

    static func number(_ s: SQLServerSession, _ sql: String) throws -> Int64 {
        if case .int(let n)? = try s.query(SQLStatement(sql)).rows.first?.first { return n }
        return 0
    }

    /// The tables of the schema with a capture trigger installed and enabled, by ``SQLServerSchema/key(_:)``.
    static func captured(_ s: SQLServerSession, _ d: SQLServerDialect) throws -> Set<String> {
        var out: Set<String> = []
        try s.query(SQLServerTriggers.installed(d)) { _, r in
            if case .string(let table) = r[0] { out.insert(SQLServerSchema.key(table)) }
        }
        return out
    }

    func currentVersion() throws -> Int64 { watermark }

    /// The log keeps every number after the smallest resume point, so the window is never
    /// lost while the trigger is there; nil when it is not.
    func minValidVersion(_ table: String) throws -> Int64? {
        captured.contains(SQLServerSchema.key(table)) ? 0 : nil
    }

    func captureOff(_ table: String) -> SQLServerError { SQLServerError.triggerMissing(table) }

    func changes(_ table: TrackedTable, since version: Int64) throws -> [TrackedChange] {
        let read = columns[table.name] ?? []
        let types = table.keyColumns.map { keyTypes[SQLServerSchema.key(table.name)]?[SQLServerSchema.key($0)] ?? "" }
        let statement = SQLServerTriggers.changes(
            table, keyTypes: types, columns: read.map(\.name), expressions: read.map(\.expression), after: version,
            upTo: watermark, dialect)
        let k = table.keyColumns.count
        var logged: [LoggedChange] = []
        try session.query(statement) { _, v in
            guard case .int(let seq) = v[0], case .string(let op) = v[1], let operation = op.first else { return }
            let context: Data? = if case .data(let d) = v[2] { d } else { nil }
            let key = DatabaseRow(Dictionary(uniqueKeysWithValues: zip(table.keyColumns, v[3..<(3 + k)])))
            let exists = v[3 + k] == .int(1)
            let row = exists ? DatabaseRow(Dictionary(uniqueKeysWithValues: zip(read.map(\.name), v[(4 + k)...]))) : nil
            logged.append(LoggedChange(number: seq, operation: operation, context: context, key: key, row: row))
        }
        return Self.net(logged)
    }

    /// One row of the log, with the row of its key as it is now.
    struct LoggedChange {
        var number: Int64
        var operation: Character
        var context: Data?
        var key: DatabaseRow
        var row: DatabaseRow?
    }

    /// What change tracking answers for the same changes: one per key, in the order of their
    /// last changes, with the first operation (an insert stays one) and the last tag.
    static func net(_ logged: [LoggedChange]) -> [TrackedChange] {
        var byKey: [DatabaseRow: (last: Int64, change: TrackedChange)] = [:]
        for l in logged.sorted(by: { $0.number < $1.number }) {
            var change =
                byKey[l.key]?.change ?? TrackedChange(operation: l.operation, context: nil, key: l.key, row: l.row)
            change.context = l.context
            byKey[l.key] = (l.number, change)
        }
        return byKey.values.sorted { $0.last < $1.last }.map(\.change)
    }
}
