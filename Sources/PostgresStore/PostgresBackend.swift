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
    // @unchecked: the writer is used only inside its own connection's queue (`sessionSync`);
    // the readers are handed out under `idle`'s lock.
    private let settings: PostgresSettings
    private let logger: Logger
    private let writer: PostgresConnection
    private let writerConnection: PostgresStoreConnection
    private let idle = Mutex<[(PostgresConnection, PostgresStoreConnection)]>([])
    /// The advisory lock every write transaction takes: one number for the whole store.
    static let writeLock: Int64 = 0x5245_414C_4D53  // "REALMS"

    private init(settings: PostgresSettings, logger: Logger, writer: PostgresConnection) throws {
        self.settings = settings
        self.logger = logger
        self.writer = writer
        writerConnection = try writer.sessionSync { PostgresStoreConnection(session: $0) }
    }

    /// Connects to the store's database and creates its tables if they are missing.
    package static func open(_ settings: PostgresSettings, logger: Logger) throws -> PostgresBackend {
        let writer = try PostgresConnection.connectSync(settings, logger: logger)
        let backend = try PostgresBackend(settings: settings, logger: logger, writer: writer)
        try backend.write(.asOpened) { db in try PostgresStoreSchema.create(db) }
        return backend
    }

    package func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        let (connection, store) = try idle.withLock { $0.popLast() } ?? newReader()
        defer { idle.withLock { $0.append((connection, store)) } }
        return try connection.sessionSync { s in
            try run(s, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body(store) }
        }
    }

    package func write<T>(_ durability: StoreDurability, _ body: (any StoreConnection) throws -> T) throws -> T {
        try writer.sessionSync { s in
            let commit = durability == .deferred ? "; SET LOCAL synchronous_commit = off" : ""
            let begin = "BEGIN; SELECT pg_advisory_xact_lock(\(Self.writeLock))\(commit)"
            // Listeners on every machine hear of it as it commits (queued by the transaction).
            return try run(s, begin: begin, end: "NOTIFY \(PostgresCommitProbe.channel); COMMIT") {
                writerConnection.inWriteTransaction = true
                defer { writerConnection.inWriteTransaction = false }
                return try body(writerConnection)
            }
        }
    }

    package func onWriter<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        try writer.sessionSync { _ in try body(writerConnection) }
    }

    /// A listener for the `NOTIFY` every write transaction sends as it commits.
    package func makeCommitProbe() -> any StoreCommitProbe {
        PostgresCommitProbe(settings: settings, logger: logger)
    }

    /// Closes every connection; the backend is not used after.
    package func close() {
        for (c, _) in idle.withLock({ $0 }) { c.close() }
        idle.withLock { $0.removeAll() }
        writer.close()
    }

    private func newReader() throws -> (PostgresConnection, PostgresStoreConnection) {
        let c = try PostgresConnection.connectSync(settings, logger: logger)
        return (c, try c.sessionSync { PostgresStoreConnection(session: $0) })
    }

    /// Runs `body` in a transaction begun by `begin`: ended by `end` when it returns, rolled
    /// back when it throws. The database's errors are thrown as ``StoreError``.
    private func run<T>(_ s: PostgresSession, begin: String, end: String = "COMMIT", _ body: () throws -> T) throws
        -> T
    {
        do {
            try s.execute(begin)
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
