import CLibPQ
import Dispatch
import Foundation
import Logging
import RealmAdapter

/// Where and how to connect, from the configuration's `database` section.
public struct PostgresSettings: Sendable {
    public var url: String?
    public var host: String?
    public var port: Int?
    public var user: String?
    public var password: Secret?
    public var database: String?
    public var sslmode: String?
    public var connectTimeout: Int = 10
    public var applicationName = "realm-adapter"

    public init(
        url: String? = nil, host: String? = nil, port: Int? = nil, user: String? = nil, password: Secret? = nil,
        database: String? = nil, sslmode: String? = nil, connectTimeout: Int = 10
    ) {
        self.url = url
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.sslmode = sslmode
        self.connectTimeout = connectTimeout
    }

    public init(_ c: DatabaseConfiguration) {
        self.init(
            url: c.url, host: c.host, port: c.port, user: c.user, password: c.password, database: c.database,
            sslmode: c.postgres.sslmode?.rawValue, connectTimeout: c.connectTimeout)
    }

    /// `host:port/database`, for messages (no credentials).
    public var displayTarget: String {
        let u = url.flatMap { try? ConnectionString($0) }
        let d = database ?? u?.database ?? ""
        return "\(host ?? u?.host ?? "localhost"):\(port ?? u?.port ?? 5432)" + (d.isEmpty ? "" : "/\(d)")
    }

    /// libpq keywords and values; the URL first, so that explicit fields override its parts.
    func parameters(replication: Bool) -> [(String, String)] {
        var p: [(String, String)] = []
        if let url { p.append(("dbname", url)) }
        if let host { p.append(("host", host)) }
        if let port { p.append(("port", String(port))) }
        if let user { p.append(("user", user)) }
        if let password { p.append(("password", password.value)) }
        if let database { p.append(("dbname", database)) }
        if let sslmode { p.append(("sslmode", sslmode)) }
        p.append(("connect_timeout", String(connectTimeout)))
        p.append(("application_name", applicationName))
        // Unambiguous text formats for every value this connector reads or writes.
        p.append(
            (
                "options",
                "-c DateStyle=ISO -c TimeZone=UTC -c extra_float_digits=3 -c bytea_output=hex -c "
                    + "IntervalStyle=iso_8601 -c client_min_messages=warning"
            ))
        if replication { p.append(("replication", "database")) }
        return p
    }
}

/// One libpq connection.
///
/// libpq calls block, so every one of them runs on the connection's own serial queue, never on
/// Swift's cooperative thread pool: ``session(_:)`` hops there once and runs a whole batch of
/// statements (a transaction, say) synchronously through a ``PostgresSession``.
///
/// ```swift
/// let pg = try await PostgresConnection.connect(settings, logger: logger)
/// let n = try await pg.session { s in try s.query("SELECT count(*) FROM bus").rows[0][0] }
/// ```
public final class PostgresConnection: @unchecked Sendable {
    // @unchecked: `handle` is only used on `queue` (through `session`), and `close` runs there too.
    private let handle: OpaquePointer
    private let queue: DispatchQueue
    public let settings: PostgresSettings
    public let isReplication: Bool
    let logger: Logger
    private var closed = false
    /// The statements prepared on this connection by ``PostgresSession/pipeline(_:endsGroup:)``,
    /// by text, and the number of names given so far (each name is used once).
    fileprivate var prepared: [String: String] = [:]
    fileprivate var preparedNames = 0

    private init(
        handle: OpaquePointer, queue: DispatchQueue, settings: PostgresSettings, replication: Bool, logger: Logger
    ) {
        self.handle = handle
        self.queue = queue
        self.settings = settings
        self.isReplication = replication
        self.logger = logger
    }

    deinit {
        if !closed { PQfinish(handle) }
    }

    /// Opens a connection (`replication: true` opens a logical replication connection).
    ///
    /// - Throws: ``PostgresError`` `connectionFailed` naming host, port and database and the
    ///   server's own message, never the password.
    public static func connect(
        _ settings: PostgresSettings, replication: Bool = false,
        logger: Logger = Logger(label: "realm-adapter.postgres")
    ) async throws -> PostgresConnection {
        let queue = DispatchQueue(label: "realm-adapter.postgres.connection")
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(
                    with: Result {
                        try connectBlocking(settings, replication: replication, queue: queue, logger: logger)
                    })
            }
        }
    }

    /// ``connect(_:replication:logger:)`` for callers on a thread of their own (it blocks).
    public static func connectSync(
        _ settings: PostgresSettings, replication: Bool = false,
        logger: Logger = Logger(label: "realm-adapter.postgres")
    ) throws -> PostgresConnection {
        let queue = DispatchQueue(label: "realm-adapter.postgres.connection")
        return try queue.sync { try connectBlocking(settings, replication: replication, queue: queue, logger: logger) }
    }

    private static func connectBlocking(
        _ settings: PostgresSettings, replication: Bool, queue: DispatchQueue, logger: Logger
    ) throws -> PostgresConnection {
        let params = settings.parameters(replication: replication)
        let keys = params.map { strdup($0.0) }
        let values = params.map { strdup($0.1) }
        defer { for p in keys + values { free(p) } }
        var k = keys.map { UnsafePointer($0) } + [nil]
        var v = values.map { UnsafePointer($0) } + [nil]
        guard let conn = PQconnectdbParams(&k, &v, 1) else {
            throw PostgresError.cannotAllocate(settings.displayTarget)
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let server = PostgresError.libpqMessage(conn)
            PQfinish(conn)
            throw PostgresError.cannotConnect(settings.displayTarget, server: server)
        }
        logger.debug(
            "Connected to Postgres",
            metadata: ["db.target": "\(settings.displayTarget)", "replication": "\(replication)"])
        return PostgresConnection(
            handle: conn, queue: queue, settings: settings, replication: replication, logger: logger)
    }

    /// Runs `body` on the connection's queue with exclusive use of the connection.
    public func session<T: Sendable>(_ body: @escaping @Sendable (PostgresSession) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body(PostgresSession(handle: self.handle, connection: self)) })
            }
        }
    }

    /// Runs `body` on the connection's queue and waits for it, blocking the calling thread.
    /// For callers that are already on a thread of their own.
    public func sessionSync<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        try queue.sync { try body(PostgresSession(handle: handle, connection: self)) }
    }

    /// Closes the connection; later use fails.
    public func close() {
        queue.sync {
            guard !closed else { return }
            closed = true
            PQfinish(handle)
        }
    }

    /// Whether the connection is still usable.
    public var isAlive: Bool { queue.sync { !closed && PQstatus(handle) == CONNECTION_OK } }
}

/// The connection, as seen from its own queue inside ``PostgresConnection/session(_:)``.
/// Do not keep it beyond the closure.
public struct PostgresSession {
    let handle: OpaquePointer
    let connection: PostgresConnection

    var raw: OpaquePointer { handle }

    /// The server's version number (150004 for 15.4).
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Runs a statement, its values sent as text parameters (``PostgresType/encode(_:)``).
    @discardableResult
    public func query(_ statement: SQLStatement) throws -> PostgresResult {
        try query(statement.text, statement.values.map(PostgresType.encode))
    }

    /// Runs one statement with text parameters (`$1`, `$2`, …; `nil` is SQL NULL) and returns
    /// its rows as text.
    @discardableResult
    public func query(_ sql: String, _ params: [String?] = []) throws -> PostgresResult {
        let result: OpaquePointer?
        if params.isEmpty {
            result = PQexec(handle, sql)
        } else {
            let copies: [UnsafeMutablePointer<CChar>?] = params.map { p in p.flatMap { strdup($0) } }
            defer { for p in copies { free(p) } }
            var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
            result = PQexecParams(handle, sql, Int32(params.count), nil, &pointers, nil, nil, 0)
        }
        return try PostgresResult(result, connection: handle, sql: sql)
    }

    /// Runs statements in libpq's pipeline mode: a group of them is sent before any result is
    /// read, so a transaction of many small statements costs a round trip per group, not per
    /// statement. Results come back in order; the first failure is thrown once the rest of its
    /// group, which the server skips, has been read (the connection stays usable: a
    /// transaction is then aborted, as after any failed statement).
    ///
    /// - Parameter endsGroup: whether a statement may return many rows: the group ends after it,
    ///   so that the server never waits to send results while this side still sends statements.
    @discardableResult
    public func pipeline(_ statements: [SQLStatement], endsGroup: (Int) -> Bool = { _ in false }) throws
        -> [PostgresResult]
    {
        guard statements.count > 1 else { return try statements.map { try query($0) } }
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError.statementFailed(PostgresError.libpqMessage(handle), lost: false, query: "pipeline")
        }
        defer { PQexitPipelineMode(handle) }
        var results: [PostgresResult] = []
        results.reserveCapacity(statements.count)
        var start = 0
        while start < statements.count {
            var end = start
            while end < statements.count, end - start < 64 {
                end += 1
                if endsGroup(end - 1) { break }
            }
            let group = statements[start..<end]
            // What was queued per statement: the name it is first prepared under, and whether it was sent.
            var queued: [(statement: SQLStatement, preparedAs: String?, sent: Bool)] = []
            // The statements this group prepares, by text: a text repeated in it is prepared once.
            var preparing: [String: String] = [:]
            for statement in group {
                let params = statement.values.map(PostgresType.encode)
                let copies: [UnsafeMutablePointer<CChar>?] = params.map { p in p.flatMap { strdup($0) } }
                defer { for p in copies { free(p) } }
                var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
                // A statement text seen before runs prepared: Postgres parses and plans it once per
                // connection (a backlog repeats a few shapes thousands of times).
                var name = connection.prepared[statement.text] ?? preparing[statement.text]
                var new: String?
                if name == nil, connection.prepared.count + preparing.count < Self.maxPrepared {
                    connection.preparedNames += 1
                    new = "realm_adapter_\(connection.preparedNames)"
                    guard PQsendPrepare(handle, new, statement.text, Int32(params.count), nil) == 1 else { break }
                    preparing[statement.text] = new
                    name = new
                }
                let ok =
                    if let name {
                        PQsendQueryPrepared(handle, name, Int32(params.count), &pointers, nil, nil, 0)
                    } else {
                        PQsendQueryParams(handle, statement.text, Int32(params.count), nil, &pointers, nil, nil, 0)
                    }
                queued.append((statement, new, ok == 1))
                guard ok == 1 else { break }
            }
            let sent = queued.count { $0.sent }
            let synced = PQpipelineSync(handle) == 1
            var failure: Error?
            for q in queued {
                if let new = q.preparedAs {
                    // A statement that cannot be prepared fails here with the database's message.
                    var prepared = false
                    while let result = PQgetResult(handle) {
                        do {
                            _ = try PostgresResult(result, connection: handle, sql: q.statement.text)
                            prepared = true
                        } catch  where failure == nil {
                            failure = error
                        } catch {}
                    }
                    if prepared { connection.prepared[q.statement.text] = new }
                }
                guard q.sent else { continue }
                while let result = PQgetResult(handle) {
                    do {
                        results.append(try PostgresResult(result, connection: handle, sql: q.statement.text))
                    } catch  where failure == nil {
                        failure = error
                    } catch {}  // PGRES_PIPELINE_ABORTED: skipped after the first failure
                }
            }
            if synced, let sync = PQgetResult(handle) { PQclear(sync) }  // PGRES_PIPELINE_SYNC
            if let failure { throw failure }
            guard sent == group.count, synced else {
                throw PostgresError.statementFailed(
                    PostgresError.libpqMessage(handle), lost: PQstatus(handle) != CONNECTION_OK,
                    query: group[group.startIndex + sent].text)
            }
            start = end
        }
        return results
    }

    /// At most this many statements are prepared on one connection (statement texts differ by
    /// table, kind and columns: a bound keeps an unusual workload from piling them up).
    static let maxPrepared = 500

    /// Runs `COPY … FROM STDIN` and streams the text-format lines `produce` writes.
    /// - Returns: the number of rows copied.
    @discardableResult
    public func copyIn(_ sql: String, _ produce: ((String) throws -> Void) throws -> Void) throws -> Int {
        try copyIn(
            sql,
            bytes: { send in
                try withoutActuallyEscaping(send) { send in
                    try produce { line in
                        var line = line
                        try line.withUTF8 { try send(UnsafeRawBufferPointer($0)) }
                    }
                }
            })
    }

    /// Runs `COPY … FROM STDIN`, `produce` sending its data in pieces of any size. A failure of
    /// `produce` aborts the `COPY`; every result is read, so the connection stays usable.
    /// - Returns: the number of rows copied.
    func copyIn(_ sql: String, bytes produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void)
        throws -> Int
    {
        _ = try query(sql)  // PGRES_COPY_IN
        var failure: Error?
        do {
            try produce { piece in
                guard
                    PQputCopyData(handle, piece.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(piece.count))
                        == 1
                else {
                    throw PostgresError.statementFailed(PostgresError.libpqMessage(handle), lost: true, query: sql)
                }
            }
        } catch { failure = error }
        PQputCopyEnd(handle, failure == nil ? nil : "aborted by the client")
        var copied = 0
        while let result = PQgetResult(handle) {
            do {
                copied = max(copied, try PostgresResult(result, connection: handle, sql: sql).affected)
            } catch  where failure == nil {
                failure = error
            } catch {}
        }
        if let failure { throw failure }
        return copied
    }

    /// Runs `COPY … TO STDOUT` and hands each CopyData message (one row: in text format with
    /// its final newline; in binary format the first also carries the file header, the last
    /// is the trailer) to `body` as it arrives; the buffer is valid only during the call.
    public func copyOut(_ sql: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        _ = try query(sql)  // PGRES_COPY_OUT
        var failure: Error?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let n = PQgetCopyData(handle, &buffer, 0)
            if n == -1 { break }  // done: the final result follows
            guard n > 0, let buffer else {
                throw PostgresError.statementFailed(
                    PostgresError.libpqMessage(handle), lost: PQstatus(handle) != CONNECTION_OK, query: sql)
            }
            defer { PQfreemem(buffer) }
            guard failure == nil else { continue }  // drain the rest so the connection stays usable
            do {
                try buffer.withMemoryRebound(to: UInt8.self, capacity: Int(n)) {
                    try body(UnsafeBufferPointer(start: $0, count: Int(n)))
                }
            } catch {
                failure = error
                // Stop the server sending the rest; what arrives meanwhile is drained above.
                if let cancel = PQgetCancel(handle) {
                    var message = [CChar](repeating: 0, count: 256)
                    _ = PQcancel(cancel, &message, Int32(message.count))
                    PQfreeCancel(cancel)
                }
            }
        }
        while let result = PQgetResult(handle) {
            do { _ = try PostgresResult(result, connection: handle, sql: sql) } catch  where failure != nil {}
        }
        if let failure { throw failure }
    }

    /// Runs statements without parameters (may be several, separated by `;`).
    public func execute(_ sql: String) throws {
        _ = try query(sql)
    }

    /// Runs `body` in a transaction: COMMIT if it returns, ROLLBACK if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A statement's result: column names and type OIDs, and rows of text values (`nil` = NULL).
public struct PostgresResult: Sendable {
    public var columns: [String]
    public var types: [UInt32]
    public var rows: [[String?]]
    /// Rows affected, for INSERT/UPDATE/DELETE.
    public var affected: Int

    /// A result with these rows (of text columns).
    init(columns: [String], rows: [[String?]], affected: Int) {
        (self.columns, self.types, self.rows, self.affected) = (columns, columns.map { _ in 25 }, rows, affected)
    }

    init(_ result: OpaquePointer?, connection: OpaquePointer, sql: String) throws {
        guard let result else {
            throw PostgresError.statementFailed(
                PostgresError.libpqMessage(connection), lost: PQstatus(connection) != CONNECTION_OK, query: sql)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard
            status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_COPY_BOTH
                || status == PGRES_COPY_OUT || status == PGRES_COPY_IN
        else {
            func field(_ code: Int32) -> String? { PQresultErrorField(result, code).map { String(cString: $0) } }
            let message =
                field(Int32(UInt8(ascii: "M")))
                ?? String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            let lost = PQstatus(connection) != CONNECTION_OK
            throw PostgresError.statementFailed(
                message, lost: lost, sqlState: field(Int32(UInt8(ascii: "C"))).map { SQLState($0) },
                detail: field(Int32(UInt8(ascii: "D"))), hint: field(Int32(UInt8(ascii: "H"))), query: sql)
        }
        let nCols = Int(PQnfields(result))
        let nRows = Int(PQntuples(result))
        // COPY results have columns but no names.
        columns = (0..<nCols).map { PQfname(result, Int32($0)).map { String(cString: $0) } ?? "" }
        types = (0..<nCols).map { UInt32(PQftype(result, Int32($0))) }
        var rows: [[String?]] = []
        rows.reserveCapacity(nRows)
        for r in 0..<Int32(nRows) {
            rows.append(
                (0..<Int32(nCols)).map { c in
                    PQgetisnull(result, r, c) == 1 ? nil : String(cString: PQgetvalue(result, r, c))
                })
        }
        self.rows = rows
        affected = Int(String(cString: PQcmdTuples(result))) ?? 0
    }
}
