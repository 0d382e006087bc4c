import CLibPQ
import Foundation

extension PostgresSession {
    /// Runs one statement and calls `body` with each row, as text, as it arrives (libpq's
    /// single-row mode): a result of any size is never all in memory.
    ///
    /// If `body` throws, the statement is cancelled and its remaining rows are discarded; the
    /// connection stays usable (a transaction it was in is then aborted).
    public func forEachRow(
        _ sql: String, parameters: [PostgresParameter?] = [], _ body: ([String?]) throws -> Void
    ) throws {
        let sent = try withParameters(parameters) { count, values, lengths, formats in
            PQsendQueryParams(handle, sql, count, nil, values, lengths, formats, 0)
        }
        guard sent == 1, PQsetSingleRowMode(handle) == 1 else {
            throw PostgresError.statementFailed(
                PostgresError.libpqMessage(handle), lost: PQstatus(handle) != CONNECTION_OK, query: sql)
        }
        var failure: (any Error)?
        while let result = PQgetResult(handle) {
            guard failure == nil else {
                PQclear(result)
                continue
            }
            guard PQresultStatus(result) == PGRES_SINGLE_TUPLE else {
                // The end (no row), or the server's error, which the result's reading throws.
                do { _ = try PostgresResult(result, connection: handle, sql: sql) } catch { failure = error }
                continue
            }
            let row = (0..<PQnfields(result)).map { c in
                PQgetisnull(result, 0, c) == 1 ? nil : String(cString: PQgetvalue(result, 0, c))
            }
            PQclear(result)
            do { try body(row) } catch {
                failure = error
                cancel()
            }
        }
        if let failure { throw failure }
    }

    /// Asks the server to stop the statement running on this connection.
    private func cancel() {
        guard let c = PQgetCancel(handle) else { return }
        defer { PQfreeCancel(c) }
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(c, &message, Int32(message.count))
    }
}
