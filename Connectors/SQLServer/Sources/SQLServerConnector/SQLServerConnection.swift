import CFreeTDS
import Dispatch
import Foundation
import Logging
import RealmAdapter

/// One FreeTDS connection to SQL Server. Every call runs on the connection's own serial queue
/// (db-lib blocks, and a `DBPROCESS` is used by one thread at a time), never on the
/// cooperative pool.
///
/// ```swift
/// let db = try await SQLServerConnection.connect(settings)
/// let n = try await db.session { s in try s.query(SQLStatement("SELECT count(*) FROM [dbo].[Bus]")) }
/// ```
public final class SQLServerConnection: @unchecked Sendable {
    // @unchecked: `process` is only used on `queue`, and `close` runs there too.
    private let process: OpaquePointer
    private let queue: DispatchQueue
    public let settings: SQLServerSettings
    let logger: Logger
    private var closed = false

    private init(process: OpaquePointer, queue: DispatchQueue, settings: SQLServerSettings, logger: Logger) {
        self.process = process
        self.queue = queue
        self.settings = settings
        self.logger = logger
    }

    deinit {
        if !closed { dbclose(process) }
    }

    /// Logs in.
    ///
    /// - Throws: ``SQLServerError`` `connectionFailed` naming the server and what db-lib and
    ///   the server said (refused, unknown host, timed out, login failed), never the password.
    public static func connect(
        _ settings: SQLServerSettings, logger: Logger = Logger(label: "realm-adapter.sqlserver")
    ) async throws -> SQLServerConnection {
        let queue = DispatchQueue(label: "realm-adapter.sqlserver.connection")
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(
                    with: Result {
                        let process = try FreeTDS.login(settings)
                        logger.debug("Connected to SQL Server", metadata: ["db.target": "\(settings.displayTarget)"])
                        return SQLServerConnection(process: process, queue: queue, settings: settings, logger: logger)
                    })
            }
        }
    }

    /// ``connect(_:logger:)`` for callers on a thread of their own (it blocks).
    public static func connectSync(
        _ settings: SQLServerSettings, logger: Logger = Logger(label: "realm-adapter.sqlserver")
    ) throws -> SQLServerConnection {
        let queue = DispatchQueue(label: "realm-adapter.sqlserver.connection")
        return try queue.sync {
            SQLServerConnection(process: try FreeTDS.login(settings), queue: queue, settings: settings, logger: logger)
        }
    }

    /// Runs `body` on the connection's queue with exclusive use of the connection.
    public func session<T: Sendable>(_ body: @escaping @Sendable (SQLServerSession) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(
                    with: Result {
                        guard !self.closed else { throw SQLServerError.closed() }
                        return try body(SQLServerSession(process: self.process))
                    })
            }
        }
    }

    /// Runs `body` on the connection's queue and waits for it, blocking the calling thread.
    /// For callers that are already on a thread of their own.
    public func sessionSync<T>(_ body: (SQLServerSession) throws -> T) throws -> T {
        try queue.sync {
            guard !closed else { throw SQLServerError.closed() }
            return try body(SQLServerSession(process: process))
        }
    }

    /// Closes the connection; later use fails.
    public func close() {
        queue.sync {
            guard !closed else { return }
            closed = true
            dbclose(process)
        }
    }
}

/// The rows of a statement, as ``Value``s: integers, floating point and bit as such, binary
/// as data, everything else as db-lib's text of it (statements that read dates, decimals and
/// UUIDs convert them to text in ISO form first: ``SQLServerType/selectExpression(_:type:)``).
public struct SQLServerResult: Sendable {
    public var rows: [[Value]] = []
}

/// Exclusive use of a connection, inside ``SQLServerConnection/session(_:)``.
public struct SQLServerSession {
    let process: OpaquePointer

    /// Runs a statement; values travel as `sp_executesql` parameters `@p1`, `@p2`, ….
    /// Returns the rows of its last result set that has rows.
    @discardableResult
    public func query(_ statement: SQLStatement) throws -> SQLServerResult {
        var results: [SQLServerResult] = []
        try query(statement) { set, row in
            if set >= results.count { results.append(SQLServerResult()) }
            results[set].rows.append(row)
        }
        return results.last ?? SQLServerResult()
    }

    /// Runs a statement and hands over each row as it arrives, with the index of its result
    /// set (0, 1, … among those with columns): a table streams through without being held.
    public func query(_ statement: SQLStatement, row: (Int, [Value]) throws -> Void) throws {
        let lost = { dbdead(self.process) != 0 }
        _ = try FreeTDS.collecting { () throws -> Bool? in
            if statement.values.isEmpty {
                guard dbcmd(process, statement.text) == SUCCEED, dbsqlexec(process) == SUCCEED else { return nil }
            } else {
                let call = try SQLServerParameters(statement)
                guard try call.send(process), dbsqlok(process) == SUCCEED else { return nil }
            }
            return try readResults(row) ? true : nil
        } failure: { diagnostics in
            _ = dbcancel(process)
            return SQLServerError.statementFailed(diagnostics, lost: lost(), query: statement.text)
        }
    }

    /// Runs statements without parameters or rows (`BEGIN TRANSACTION`, DDL).
    public func execute(_ text: String) throws { try query(SQLStatement(text)) { _, _ in } }

    /// Every result set's rows; false when db-lib reports a failure.
    private func readResults(_ handle: (Int, [Value]) throws -> Void) throws -> Bool {
        var set = 0
        while true {
            let rc = dbresults(process)
            if rc == NO_MORE_RESULTS { return true }
            guard rc == SUCCEED else { return false }
            let n = Int(dbnumcols(process))
            guard n > 0 else { continue }
            while true {
                let status = dbnextrow(process)
                if status == NO_MORE_ROWS { break }
                guard status != FAIL else { return false }
                try handle(set, (1...n).map { value(column: Int32($0)) })
            }
            set += 1
        }
    }

    private func value(column c: Int32) -> Value {
        guard let data = dbdata(process, c) else { return .null }
        let length = Int(dbdatlen(process, c))
        let type = Int(dbcoltype(process, c))
        let raw = UnsafeRawPointer(data)
        switch type {
        case SYBINT1: return .int(Int64(raw.load(as: UInt8.self)))
        case SYBINT2: return .int(Int64(raw.loadUnaligned(as: Int16.self)))
        case SYBINT4: return .int(Int64(raw.loadUnaligned(as: Int32.self)))
        case SYBINT8: return .int(raw.loadUnaligned(as: Int64.self))
        case SYBBIT, SYBBITN: return .bool(raw.load(as: UInt8.self) != 0)
        case SYBFLT8: return .double(raw.loadUnaligned(as: Double.self))
        case SYBREAL: return .double(Double(raw.loadUnaligned(as: Float.self)))
        case SYBBINARY, SYBVARBINARY, SYBIMAGE: return .data(Data(bytes: raw, count: length))
        case SYBCHAR, SYBVARCHAR, SYBTEXT, SYBNVARCHAR, SYBNTEXT:
            return .string(String(decoding: UnsafeRawBufferPointer(start: raw, count: length), as: UTF8.self))
        default:
            // Decimals, money, dates, UUIDs: db-lib's text of them.
            var buffer = [UInt8](repeating: 0, count: 256)
            let n = dbconvert(process, Int32(type), data, Int32(length), Int32(SYBCHAR), &buffer, Int32(buffer.count))
            return n < 0 ? .null : .string(String(decoding: buffer.prefix(Int(n)), as: UTF8.self))
        }
    }
}
