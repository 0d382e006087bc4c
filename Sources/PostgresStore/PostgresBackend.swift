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
    /// The store-wide locks this process holds (``exclusiveLock(_:)``): the session holding each
    /// (its server process id) and its key, by lock.
    private let fences = Mutex<[ObjectIdentifier: (pid: Int64, key: Int64)]>([:])
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
                let value = try link.connection.sessionSync { _ in
                    try run(link.store, begin: ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"], end: nil) {
                        try body(link.store)
                    }
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
                return try link.connection.sessionSync { _ in
                    let begin =
                        ["BEGIN", "SELECT pg_advisory_xact_lock(\(Self.writeLock))"]
                        + (durability == .deferred ? ["SET LOCAL synchronous_commit = off"] : []) + fenceCheck()
                    // Listeners on every machine hear of it as it commits (queued by the transaction).
                    return try run(link.store, begin: begin, end: ["NOTIFY \(PostgresCommitProbe.channel)", "COMMIT"]) {
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

    /// Runs `body` in a transaction begun by `begin` (sent with its first statement): ended by
    /// `end` when it returns (with the writes still held back, in one round trip; a read-only
    /// transaction by a COMMIT whose answer is not waited for), rolled back when it throws. A
    /// transaction that sent nothing is not begun, nor ended. The database's errors are thrown
    /// as ``StoreError``.
    private func run<T>(_ store: PostgresStoreConnection, begin: [String], end: [String]?, _ body: () throws -> T)
        throws -> T
    {
        (store.lead, store.leadLost, store.sentAny) = (begin.map { PostgresPipelined($0) }, nil, false)
        defer { (store.lead, store.leadLost) = ([], nil) }
        let value: T
        do { value = try body() } catch {
            if let lost = store.leadLost { throw Unbegun(error: lost) }
            if store.sentAny { _ = try? store.session.execute("ROLLBACK") }
            throw error
        }
        if let lost = store.leadLost { throw Unbegun(error: lost) }
        guard store.sentAny || store.lead.count > begin.count else { return value }
        guard let end else {
            store.commitWithoutWaiting()
            return value
        }
        // A body that went on after one of its statements failed wrote outside any
        // transaction, or in a failed one: nothing of it may be committed.
        guard !store.sentAny || store.session.transactionState == .open else {
            _ = try? store.session.execute("ROLLBACK")
            throw StoreError.notInTransaction
        }
        // Writes held back alone go before the COMMIT, not with it: a broken connection is
        // found before anything could be committed, and the transaction is tried again.
        if !store.sentAny {
            do { try store.flush() } catch {
                if let lost = store.leadLost { throw Unbegun(error: lost) }
                _ = try? store.session.execute("ROLLBACK")
                throw error
            }
        }
        do {
            if store.lead.isEmpty {
                try store.session.execute(end.joined(separator: "; "))
            } else {
                try store.session.run(store.lead + end.map { PostgresPipelined($0) })
            }
        } catch let e as PostgresError {
            _ = try? store.session.execute("ROLLBACK")
            throw StoreError(heldBack: e)
        }
        return value
    }
}

extension StoreError {
    /// A transaction's body that returned although its statements did not run in the
    /// transaction (the store's fault, never the data's).
    static let notInTransaction = StoreError(
        .failed, code: "postgres transaction",
        message: "the transaction's statements did not all run in it (one failed and the rest went on); "
            + "nothing was committed")
}

extension PostgresBackend {
    /// A session-level advisory lock on a connection of its own: the server releases it when
    /// that connection ends, including when this process dies (its socket closes).
    ///
    /// While it is held, every write transaction of this backend first checks that its session
    /// still holds it (the fence): a connection that ended while this process lives (a network
    /// cut, a server that ended it) released the lock, another process may hold it now, and
    /// this one must write nothing more.
    package func exclusiveLock(_ name: String) throws -> (any StoreLock)? {
        let connection = try PostgresConnection.connectSync(settings, logger: logger)
        let row = try connection.sessionSync { s in
            try s.query(
                "SELECT pg_try_advisory_lock(k), pg_backend_pid(), k FROM (SELECT hashtextextended($1, 0) AS k) AS n",
                [name]
            ).rows.first
        }
        guard let row, row[0] == "t", let pid = row[1].flatMap(Int64.init), let key = row[2].flatMap(Int64.init) else {
            connection.close()
            return nil
        }
        let lock = AdvisoryLock(connection: connection)
        let id = ObjectIdentifier(lock)
        fences.withLock { $0[id] = (pid, key) }
        lock.released = { [weak self] in self?.fences.withLock { _ = $0.removeValue(forKey: id) } }
        return lock
    }

    /// The statement a write transaction begins with while this process holds locks: it fails
    /// the transaction if any of them is no longer held by the session that took it.
    private func fenceCheck() -> [String] {
        let held = fences.withLock { Array($0.values) }
        guard !held.isEmpty else { return [] }
        let pairs = held.map { "(\($0.pid), \($0.key))" }.joined(separator: ", ")
        return [
            """
            DO $fence$ BEGIN IF (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
            AND objsubid = 1 AND (pid, (classid::bigint << 32) | objid::bigint) IN (\(pairs))) < \(held.count) THEN \
            RAISE EXCEPTION USING ERRCODE = 'RA001', MESSAGE = 'This process no longer holds its lock on the \
            store (its connection to the store''s database ended): another daemon may have taken over, so it \
            writes nothing more. Restart it: it stands by, or takes over again.'; END IF; END $fence$
            """
        ]
    }
}

/// A held advisory lock: its connection, closed when the value goes away.
private final class AdvisoryLock: StoreLock, @unchecked Sendable {
    // @unchecked: `released` is set once, before the lock is handed out.
    private let connection: PostgresConnection
    var released: () -> Void = {}
    init(connection: PostgresConnection) { self.connection = connection }
    deinit {
        released()
        connection.close()
    }
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
