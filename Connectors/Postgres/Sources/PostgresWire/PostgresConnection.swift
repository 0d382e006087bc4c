import CLibPQ
import Dispatch
import Foundation
import Logging
import RealmAdapter

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
    package let logger: Logger
    private var closed = false
    /// The statements prepared on this connection by ``PostgresSession/pipeline(_:endsGroup:)``
    /// (by text) and ``PostgresSession/query(_:parameters:types:after:inSavepoint:)`` (by text and
    /// parameter types), and the number of names given so far (each name is used once).
    var prepared: [String: String] = [:]
    private var preparedNames = 0

    /// A name no statement prepared on this connection has yet.
    func nextPreparedName() -> String {
        preparedNames += 1
        return "realm_adapter_\(preparedNames)"
    }

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
