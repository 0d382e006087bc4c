import Foundation
import Logging

/// How far sync has come, as data: what `realm-adapter status` prints and Studio's Sync page
/// shows, computed once, here.
public struct SyncReport: Sendable {
    /// One followed Realm: its version, the transactions the adapter has still to send, the
    /// version the database recorded, and the last database position it holds (as people read it).
    public struct RealmLine: Sendable, Equatable {
        public var path: String
        public var version: Int64
        public var unsent: Int
        public var recorded: Int64?
        public var position: String?
    }

    /// A webhook (`events.webhooks`) and its backlog.
    public struct WebhookLine: Sendable {
        public var name: String
        public var lag: EventHandler.Lag
    }

    public var adapter: String
    /// The store's engine (`sqlite`, `postgres`).
    public var engine: String
    /// How many Realms the adapter follows.
    public var realmCount: Int
    /// How many of them have transactions to send.
    public var behind: Int
    /// Every followed Realm up to `listAllUpTo`; past it, those with unsent transactions. In path order.
    public var realms: [RealmLine]
    /// The database side: versions applied, the change stream, its warnings, dead letters.
    public var database: DatabaseStatus
    /// Why `run` refuses to start, when a load began and did not finish.
    public var unfinishedLoad: String?
    public var webhooks: [WebhookLine]
    /// Realm transactions the database rejected, which stopped the daemon.
    public var blocked: [BlockedTransaction]
    /// A database change no Realm can hold, which stopped the daemon.
    public var blockedRow: BlockedRow?

    /// Whether something needs a person: a warning, dead letters, an unfinished load (`status`
    /// exits with code 2).
    public var needsAttention: Bool {
        !database.warnings.isEmpty || database.deadLetters > 0 || database.deadRows > 0 || unfinishedLoad != nil
            || webhooks.contains { !$0.lag.deadLetters.isEmpty }
    }

    /// Whether sync is stopped (`status` exits with code 3).
    public var isBlocked: Bool { !blocked.isEmpty || blockedRow != nil }

    /// The report of configuration `c`'s adapter over `store` and `connector`.
    public static func make(
        _ c: Configuration, store: RealmStore, connector: any DatabaseConnector, listAllUpTo: Int = 20, logger: Logger
    ) async throws -> SyncReport {
        let database = try await connector.statusReport(adapter: c.realm.adapterName)
        let adapter = try Adapter(
            store: store, name: c.realm.adapterName, pathRegex: c.realm.effectivePathRegex, logger: logger)
        // Per-user Realms run to the hundreds of thousands: past `listAllUpTo`, those with unsent
        // changes (found by one query).
        let paths = try adapter.paths()
        let pending = Dictionary(try adapter.pendingCounts(), uniquingKeysWith: { a, _ in a })
        let shown = paths.count <= listAllUpTo ? paths : paths.filter { pending[$0] != nil }
        var lines: [RealmLine] = []
        var blocked: [BlockedTransaction] = []
        for path in shown {
            if pending[path] != nil, let b = try BlockedTransaction.current(in: store, adapter: adapter, path: path),
                (database.applied[path] ?? 0) < b.version
            {
                blocked.append(b)
            }
            let position = try store.sourcePosition(connector.sourceName, of: path, origin: adapter.origin)
            lines.append(
                RealmLine(
                    path: path, version: try store.version(of: path), unsent: pending[path] ?? 0,
                    recorded: database.applied[path], position: position.map(connector.describe(position:))))
        }
        var unfinished: String?
        do { try Loader.requireFinishedLoad(store, source: connector.sourceName) } catch let e as RealmAdapterError {
            unfinished = e.message
        }
        let blockedRow = try BlockedRow.current(in: store, source: connector.sourceName, origin: adapter.origin)
        return SyncReport(
            adapter: c.realm.adapterName, engine: store.engine, realmCount: paths.count, behind: pending.count,
            realms: lines, database: database, unfinishedLoad: unfinished,
            webhooks: try webhooks(c, store: store, logger: logger), blocked: blocked,
            blockedRow: blockedRow.map {
                BlockedRow(position: connector.describe(position: $0.position), error: $0.error)
            })
    }

    /// Each webhook's backlog and dead letters; with no store yet, nothing to deliver.
    public static func webhooks(_ c: Configuration, store: RealmStore?, logger: Logger) throws -> [WebhookLine] {
        try c.events.webhooks.map { w in
            WebhookLine(
                name: w.name,
                lag: try store.map { try Webhook(w).handler(store: $0, retry: c.events.retry, logger: logger).lag() }
                    ?? .caughtUp)
        }
    }
}

extension Adapter {
    /// Moves the Realm transaction that blocks sync at `path` to the database's dead letters,
    /// marked applied in the same database transaction, so that sync goes on from the next one
    /// (`realm-adapter dead-letter`, Studio's Sync page). Refused while a daemon streams, and
    /// when `version` is given and is not the blocked one. Returns the transaction moved.
    public func moveBlockedToDeadLetters(_ path: String, version: Int64?, connector: any DatabaseConnector)
        async throws -> RealmTransaction
    {
        let status = try await connector.statusReport(adapter: name)
        guard !status.streaming else { throw RealmAdapterError.daemonRunning(stream: status.streamName) }
        guard try store.contains(path) else { throw RealmAdapterError.realmNotFound(path) }
        // The database may hold it already (a crash after its commit): then it is not blocking.
        let applied = try await connector.appliedVersions(adapter: name)[path] ?? 0
        if try cursor(path) < applied { try advance(path, through: applied) }
        guard let tx = try pending(path, limit: 1).first else { throw RealmAdapterError.nothingBlocked(path) }
        if let version, version != tx.version {
            throw RealmAdapterError.notTheBlockedVersion(path, oldest: tx.version, given: version)
        }
        let blocked = try BlockedTransaction.current(in: store, adapter: self, path: path)
        let reason = blocked?.error ?? "moved aside by realm-adapter dead-letter"
        try await connector.deadLetter(tx.instructions, error: reason, adapter: name, path: path, version: tx.version)
        try UnsentObjects.record(tx.instructions, store, adapter: name, path: path)
        try advance(path, through: tx.version)
        try BlockedTransaction.clear(in: store, adapter: name, path: path)
        return tx
    }
}

extension RealmAdapterError {
    public static func daemonRunning(stream: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState, "A daemon is streaming from \(stream): stop it first, then move the transaction aside.")
    }

    public static func nothingBlocked(_ path: String) -> RealmAdapterError {
        RealmAdapterError(.invalidState, "\(path) has no transaction waiting to be sent: nothing is blocked.")
    }

    public static func notTheBlockedVersion(_ path: String, oldest: Int64, given: Int64) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "The oldest unsent transaction of \(path) is version \(oldest), not \(given); "
                + "run `realm-adapter status` again.")
    }
}
