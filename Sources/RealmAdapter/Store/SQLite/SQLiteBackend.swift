import Foundation
import GRDB
import Logging
import Synchronization

/// The embedded backend: one SQLite database (the store's `realms.sqlite` in WAL mode, or the
/// server's `server.sqlite`), written by one process at a time, read by any number.
final class SQLiteBackend: StoreBackend {
    var engine: String { "sqlite" }
    let pool: any DatabaseWriter
    let path: String
    let durable: Bool
    private let logger: Logger

    init(pool: any DatabaseWriter, path: String, durable: Bool, logger: Logger) {
        self.pool = pool
        self.path = path
        self.durable = durable
        self.logger = logger
    }

    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        do { return try pool.read { db in try body(SQLiteConnection(db: db)) } } catch let e as DatabaseError {
            throw StoreError(e)
        }
    }

    func write<T>(_ durability: StoreDurability, _ body: (any StoreConnection) throws -> T) throws -> T {
        let synchronous: String? =
            switch durability {
            case .asOpened: nil
            case .flushed: durable ? nil : "FULL"
            case .deferred: durable ? "NORMAL" : nil
            }
        do {
            guard let synchronous else { return try pool.write { db in try body(SQLiteConnection(db: db)) } }
            return try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
                defer { try? db.execute(sql: "PRAGMA synchronous = \(durable ? "FULL" : "NORMAL")") }
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(SQLiteConnection(db: db))
                    return .commit
                }
                return result!
            }
        } catch let e as DatabaseError {
            throw StoreError(e)
        }
    }

    func onWriter<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        do { return try pool.writeWithoutTransaction { db in try body(SQLiteConnection(db: db)) } } catch let e
            as DatabaseError
        {
            throw StoreError(e)
        }
    }

    func makeCommitProbe() -> any StoreCommitProbe { DataVersionProbe(path: path, logger: logger) }
}

/// A connection of its own, whose `PRAGMA data_version` moves when any other connection, in
/// this process or another, commits.
final class DataVersionProbe: StoreCommitProbe {
    private struct State: @unchecked Sendable {
        var queue: DatabaseQueue?
        var dataVersion: Int64?
    }

    private let path: String
    private let logger: Logger
    private let state = Mutex(State())

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    func committedSinceLastCheck() -> Bool {
        do {
            return try state.withLock { s in
                if s.queue == nil {
                    var configuration = GRDB.Configuration()
                    configuration.readonly = true
                    configuration.label = "realm-adapter.store.notifier.probe"
                    s.queue = try DatabaseQueue(path: path, configuration: configuration)
                }
                let version = try s.queue!.inDatabase { db in
                    try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
                }
                defer { s.dataVersion = version }
                return s.dataVersion == nil || s.dataVersion != version
            }
        } catch {
            logger.debug("The store's change probe failed; reading history instead", metadata: ["error": "\(error)"])
            return true
        }
    }
}
