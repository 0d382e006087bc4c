import CLibPQ
import Foundation

/// A notification from `NOTIFY` (or `pg_notify`) on a channel the session listens to.
public struct PostgresNotification: Sendable, Hashable {
    public var channel: String
    public var payload: String
    /// The server process that sent it.
    public var processId: Int32
}

extension PostgresSession {
    /// Starts receiving notifications on `channel` (a name, quoted here).
    public func listen(_ channel: String) throws {
        try execute("LISTEN \(PostgresSQL.quote(channel))")
    }

    /// The notifications received so far, in the order sent; when there is none yet, waits up
    /// to `timeout` for the first. Empty after the timeout.
    ///
    /// - Throws: ``PostgresError`` `connectionLost` if the connection broke.
    public func notifications(waitingUpTo timeout: Duration) throws -> [PostgresNotification] {
        let deadline = ContinuousClock.now + timeout
        while true {
            guard PQconsumeInput(handle) == 1 else {
                throw PostgresError.statementFailed(PostgresError.libpqMessage(handle), lost: true, query: "LISTEN")
            }
            var out: [PostgresNotification] = []
            while let n = PQnotifies(handle) {
                out.append(
                    PostgresNotification(
                        channel: String(cString: n.pointee.relname), payload: String(cString: n.pointee.extra),
                        processId: n.pointee.be_pid))
                PQfreemem(n)
            }
            let left = deadline - ContinuousClock.now
            guard out.isEmpty, left > .zero else { return out }
            let ms = Int32(
                min(Double(left.components.seconds) * 1000 + Double(left.components.attoseconds) / 1e15, 1000))
            var pfd = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, max(ms, 1))
        }
    }
}
