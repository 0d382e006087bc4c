import Foundation
import Logging
import PostgresWire
import RealmAdapter
import Synchronization

/// The Realm store in a Postgres database: the same tables as the embedded store, made in one
/// step, shared by any number of processes on any number of machines.
///
/// Writes are serialized across all of them by a transaction-scoped advisory lock taken first
/// in every write transaction, so ids taken as the next free one, versions and cursors move
/// as in SQLite, and history ids are in commit order. Reads run in `REPEATABLE READ` snapshots
/// on connections of their own.
package final class PostgresBackend: StoreBackend, @unchecked Sendable {
    // @unchecked: a connection is used only inside its own queue (`sessionSync`); links are
    // handed out under their locks.
    package var engine: String { "postgres" }
    private let settings: PostgresSettings
    private let logger: Logger
    private let writer = Mutex<Link?>(nil)
    private let idle = Mutex<[Link]>([])
    /// The advisory lock every write transaction takes: one number for the whole store.
    static let writeLock: Int64 = 0x5245_414C_4D53  // "REALMS"

    /// A libpq connection and the store's side of it.
    private struct Link: @unchecked Sendable {
        let connection: PostgresConnection
        let store: PostgresStoreConnection
    }

    private init(settings: PostgresSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Connects to the store's database and creates its tables if they are missing.
    package static func open(_ settings: PostgresSettings, logger: Logger) throws -> PostgresBackend {
        let backend = PostgresBackend(settings: settings, logger: logger)
        try backend.write(.asOpened) { db in try PostgresStoreSchema.create(db) }
        return backend
    }

    package func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        try retryingUnbegun {
            let link = try idle.withLock { $0.popLast() } ?? connect()
            do {
                let value = try link.connection.sessionSync { s in
                    try run(s, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body(link.store) }
                }
                idle.withLock { $0.append(link) }
                return value
            } catch {
                if link.connection.isAlive { idle.withLock { $0.append(link) } } else { link.connection.close() }
                throw error
            }
        }
    }

    package func write<T>(_ durability: StoreDurability, _ body: (any StoreConnection) throws -> T) throws -> T {
        try retryingUnbegun {
            let link = try writerLink()
            do {
                return try link.connection.sessionSync { s in
                    let commit = durability == .deferred ? "; SET LOCAL synchronous_commit = off" : ""
                    let begin = "BEGIN; SELECT pg_advisory_xact_lock(\(Self.writeLock))\(commit)"
                    // Listeners on every machine hear of it as it commits (queued by the transaction).
                    return try run(s, begin: begin, end: "NOTIFY \(PostgresCommitProbe.channel); COMMIT") {
                        link.store.inWriteTransaction = true
                        defer { link.store.inWriteTransaction = false }
                        return try body(link.store)
                    }
                }
            } catch {
                if !link.connection.isAlive { dropWriter(link) }
                throw error
            }
        }
    }

    package func onWriter<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        let link = try writerLink()
        return try link.connection.sessionSync { _ in try body(link.store) }
    }

    /// A listener for the `NOTIFY` every write transaction sends as it commits.
    package func makeCommitProbe() -> any StoreCommitProbe {
        PostgresCommitProbe(settings: settings, logger: logger)
    }

    /// Closes every connection; the backend is not used after.
    package func close() {
        for link in idle.withLock({ $0 }) { link.connection.close() }
        idle.withLock { $0.removeAll() }
        writer.withLock { $0?.connection.close() }
    }

    // MARK: Connections

    private func connect() throws -> Link {
        do {
            let c = try PostgresConnection.connectSync(settings, logger: logger)
            return Link(connection: c, store: try c.sessionSync { PostgresStoreConnection(session: $0) })
        } catch let e as PostgresError {
            throw StoreError(e)
        }
    }

    private func writerLink() throws -> Link {
        try writer.withLock { w in
            if let w { return w }
            let link = try connect()
            w = link
            return link
        }
    }

    private func dropWriter(_ link: Link) {
        writer.withLock { w in if w?.connection === link.connection { w = nil } }
        link.connection.close()
    }

    /// Runs `attempt`, and once more on a new connection if its connection turned out to be
    /// broken before its transaction began (the server restarted, say): nothing was sent then.
    /// Idle connections are dropped with it, as broken by the same cause.
    private func retryingUnbegun<T>(_ attempt: () throws -> T) throws -> T {
        do {
            return try attempt()
        } catch let e as Unbegun {
            logger.notice(
                "The store's database connection was broken; connecting again",
                metadata: ["error": "\(e.error.message)"])
            let broken = idle.withLock { links in
                defer { links.removeAll() }
                return links
            }
            for link in broken { link.connection.close() }
            do { return try attempt() } catch let e as Unbegun { throw e.error }
        }
    }

    /// A transaction that could not begin because its connection was broken.
    private struct Unbegun: Error {
        let error: StoreError
    }

    /// Runs `body` in a transaction begun by `begin`: ended by `end` when it returns, rolled
    /// back when it throws. The database's errors are thrown as ``StoreError``.
    private func run<T>(_ s: PostgresSession, begin: String, end: String = "COMMIT", _ body: () throws -> T) throws
        -> T
    {
        do {
            do { try s.execute(begin) } catch let e as PostgresError where e.code == .connectionLost {
                throw Unbegun(error: StoreError(e))
            }
            let value: T
            do { value = try body() } catch {
                _ = try? s.execute("ROLLBACK")
                throw error
            }
            try s.execute(end)
            return value
        } catch let e as PostgresError {
            _ = try? s.execute("ROLLBACK")
            throw StoreError(e)
        }
    }
}

extension PostgresBackend {
    /// A session-level advisory lock on a connection of its own: the server releases it when
    /// that connection ends, including when this process dies (its socket closes).
    package func exclusiveLock(_ name: String) throws -> (any StoreLock)? {
        let connection = try PostgresConnection.connectSync(settings, logger: logger)
        let held = try connection.sessionSync { s in
            try s.query("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", [name]).rows.first?.first == "t"
        }
        guard held else {
            connection.close()
            return nil
        }
        return AdvisoryLock(connection: connection)
    }
}

/// A held advisory lock: its connection, closed when the value goes away.
private final class AdvisoryLock: StoreLock {
    private let connection: PostgresConnection
    init(connection: PostgresConnection) { self.connection = connection }
    deinit { connection.close() }
}

extension PostgresBackend {
    /// Whether the database at `settings` holds a store (its tables), without making one.
    package static func holdsStore(_ settings: PostgresSettings, logger: Logger) throws -> Bool {
        let connection = try PostgresConnection.connectSync(settings, logger: logger)
        defer { connection.close() }
        return try connection.sessionSync { s in
            try s.query("SELECT to_regclass('realm') IS NOT NULL").rows.first?.first == "t"
        }
    }
}
