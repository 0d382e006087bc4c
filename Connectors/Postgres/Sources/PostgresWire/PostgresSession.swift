import CLibPQ
import Foundation
import RealmAdapter

/// The connection, as seen from its own queue inside ``PostgresConnection/session(_:)``.
/// Do not keep it beyond the closure.
public struct PostgresSession {
    let handle: OpaquePointer
    let connection: PostgresConnection

    /// libpq's connection, for the connector's replication stream and COPY.
    package var raw: OpaquePointer { handle }

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
        guard !params.isEmpty else { return try PostgresResult(PQexec(handle, sql), connection: handle, sql: sql) }
        return try query(sql, parameters: params.map { $0.map(PostgresParameter.text) })
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
                    new = connection.nextPreparedName()
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
    package func copyIn(_ sql: String, bytes produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void)
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
