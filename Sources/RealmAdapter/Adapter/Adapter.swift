import Foundation
import Logging
import Synchronization

/// Follows the Realms of a store as ordered instruction streams (the legacy `Realm.Sync.Adapter`).
///
/// An adapter has a name and a path filter (a regular expression). For each matching Realm it
/// keeps a durable cursor: ``current(_:)`` returns the oldest transaction it has not advanced
/// past (the same one until ``advance(_:durable:)``), and `advance` moves past it for good, across
/// restarts. Transactions written through ``realm(at:)`` carry this adapter's origin and are
/// never returned by its own `current`: that is how a two-way connector avoids echoes.
///
/// ```swift
/// let adapter = try Adapter(store: store, name: "search-index", pathRegex: "^/.*$")
/// for await path in adapter.pathsWithChanges() {
///     while let tx = try adapter.current(path) {
///         try index(tx.instructions)
///         try adapter.advance(path)
///     }
/// }
/// ```
public final class Adapter: Sendable {
    public let store: RealmStore
    public let name: String
    public let pathRegex: String
    /// The adapter's number in the store: cursors are kept by it (one per Realm, so the name once).
    let id: Int64
    /// The origin tag of this adapter's own writes.
    public var origin: String { "adapter:\(name)" }

    private let filter: PathFilter
    private let logger: Logger
    /// The transaction `current` last returned per path, so replay does not decode again.
    private let replaying = Mutex<[String: RealmTransaction]>([:])
    /// Advances since the last compaction, per path.
    private let advancesSinceCompaction = Mutex<[String: Int]>([:])
    /// How many advances on a Realm between compactions of its history.
    public let compactionInterval: Int

    /// Registers (or re-opens) the adapter `name`. Cursors of a re-opened adapter are where it
    /// left them. Changing the path filter of an existing name is allowed.
    ///
    /// - Parameter recordsChanges: whether the store records, for the Realms this adapter
    ///   follows, what each transaction changed, so that ``RealmStore/changeSet(of:in:)`` and
    ///   ``RealmSnapshot`` work for the transactions it has not advanced past (event handlers and
    ///   webhooks do). Such an adapter, when first registered, starts at each existing Realm's
    ///   current version: what was written before was not recorded; so does it at the Realms a
    ///   changed path filter takes in.
    /// - Throws: `invalidConfiguration` for a path filter that is not a valid regular expression.
    public init(
        store: RealmStore, name: String, pathRegex: String, recordsChanges: Bool = false,
        compactionInterval: Int = 256, logger: Logger = Logger(label: "realm-adapter.adapter")
    ) throws {
        filter = try PathFilter(pathRegex)
        guard !name.isEmpty else {
            throw RealmAdapterError.emptyAdapterName()
        }
        self.store = store
        self.name = name
        self.pathRegex = pathRegex
        self.compactionInterval = compactionInterval
        self.logger = logger
        let filter = self.filter
        id = try store.writeMeta { db in
            let before = try String.fetchOne(
                db, sql: "SELECT path_regex FROM adapter WHERE name = ?", arguments: [name])
            try db.execute(
                sql: """
                    INSERT INTO adapter (name, path_regex, registered_at, records_changes) VALUES (?, ?, ?, ?)
                    ON CONFLICT(name) DO UPDATE SET path_regex = excluded.path_regex,
                        records_changes = excluded.records_changes
                    """, arguments: [name, pathRegex, Timestamp(Date()).totalNanoseconds ?? 0, recordsChanges])
            let id = try Int64.fetchOne(db, sql: "SELECT id FROM adapter WHERE name = ?", arguments: [name])!
            // What it did not follow was not recorded for it: it takes those Realms in from now.
            if recordsChanges, before != pathRegex {
                let followed = try before.map { try PathFilter($0) }
                let start = try db.cachedStatement(
                    sql: """
                        INSERT INTO adapter_cursor (adapter_id, realm_id, version) VALUES (?, ?, ?)
                        ON CONFLICT (adapter_id, realm_id) DO UPDATE SET \(db.dialect.cursorNeverBack())
                        """)
                for row in try StoreRow.fetchAll(db, sql: "SELECT id, path, version FROM realm WHERE version > 0")
                where filter.matches(row[1]) && followed?.matches(row[1]) != true {
                    try start.execute(arguments: [id, row[0] as Int64, row[2] as Int64])
                }
            }
            return id
        }
    }

    /// Whether the filter matches `path`.
    public func follows(_ path: String) -> Bool { filter.matches(path) }

    /// The Realms this adapter follows, sorted.
    public func paths() throws -> [String] { try store.realmPaths().filter(follows) }

    /// The oldest transaction of the Realm at `path` that this adapter has not advanced past
    /// and did not write itself, or nil when it is caught up. Calling it again without
    /// ``advance(_:durable:)`` returns the same transaction.
    public func current(_ path: String) throws -> RealmTransaction? {
        guard follows(path) else { return nil }
        if let tx = replaying.withLock({ $0[path] }) { return tx }
        let found = try pending(path, limit: 1).first
        if let found { replaying.withLock { $0[path] = found } }
        return found
    }

    /// Durably moves past the transaction ``current(_:)`` returned, and past any of this
    /// adapter's own transactions before it. Without a pending transaction, moves past this
    /// adapter's own trailing transactions, if any.
    ///
    /// - Parameter durable: `false` skips flushing this cursor to disk on its own, for adapters
    ///   whose target records what it applied (a power loss then replays a little, and the
    ///   target's record skips it); a process crash loses nothing either way.
    public func advance(_ path: String, durable: Bool = true) throws {
        let tx = replaying.withLock { $0.removeValue(forKey: path) }
        try store.writeMeta(durable: durable) { db in
            guard let r = try RealmStore.realmRow(db, path) else { return }
            var target: Int64
            if let tx {
                target = tx.version
            } else {
                // Nothing pending: only own transactions may be skipped, never someone else's.
                let cursor = try cursorVersion(db, r.id)
                target = try lastOwn(db, r, after: cursor)
                guard target > cursor else { return }
            }
            // Own transactions right after the advanced one can be passed too.
            try setCursor(db, r.id, max(target, try lastOwn(db, r, after: target)))
        }
        try compactIfDue(path)
    }

    /// The version before the first transaction after `version` that is not this adapter's own
    /// (the Realm's version if there is none): how far the cursor may pass own transactions.
    private func lastOwn(_ db: any StoreConnection, _ r: RealmStore.RealmRow, after version: Int64) throws -> Int64 {
        let next = try Int64.fetchOne(
            db.cachedStatement(
                sql: "SELECT min(version) FROM history WHERE realm_id = ? AND version > ? AND origin <> ?"),
            arguments: [r.id, version, origin])
        return next.map { $0 - 1 } ?? r.version
    }

    /// ``advance(_:durable:)`` with nothing pending, for each of `paths`, in one durable store
    /// transaction: past each Realm's own trailing transactions (a load's hand-off to thousands
    /// of Realms costs one commit, not one each).
    public func advancePastOwnTransactions(_ paths: [String]) throws {
        replaying.withLock { r in for p in paths { r[p] = nil } }
        try store.writeMeta(durable: true) { db in
            // One statement per Realm: the cursor goes up to just before the first transaction
            // after it that is not this adapter's own, or to the Realm's version.
            try db.execute(
                sql: """
                    INSERT INTO adapter_cursor (adapter_id, realm_id, version)
                    SELECT ?1, r.id, coalesce((SELECT min(h.version) FROM history h WHERE h.realm_id = r.id
                                               AND h.version > coalesce(c.version, 0) AND h.origin <> ?2) - 1, r.version)
                    FROM \(db.dialect.jsonArrayElements("?3", as: "p"))
                    \(db.dialect.orderedJoin) realm r ON r.path = p.value
                    LEFT JOIN adapter_cursor c ON c.adapter_id = ?1 AND c.realm_id = r.id
                    WHERE true ON CONFLICT (adapter_id, realm_id) DO UPDATE SET \(db.dialect.cursorNeverBack())
                    """, arguments: [id, origin, RealmStore.jsonArray(paths)])
        }
    }

    /// ``advance(_:through:durable:)`` for each Realm and version, in one durable store transaction.
    public func advance(through targets: [(path: String, version: Int64)]) throws {
        replaying.withLock { r in for t in targets { r[t.path] = nil } }
        try store.writeMeta(durable: true) { db in
            // All the Realms in one statement, as a JSON array of [path, version] (`CROSS JOIN`:
            // each element finds its Realm by the path index).
            let pairs = RealmStore.jsonArray(targets.map { ($0.path, $0.version) })
            let d = db.dialect
            try db.execute(
                sql: """
                    INSERT INTO adapter_cursor (adapter_id, realm_id, version)
                    SELECT ?, r.id, \(d.least(d.jsonElement("p.value", 1, integer: true), "r.version"))
                    FROM \(d.jsonArrayElements("?", as: "p")) \(d.orderedJoin) realm r
                    ON r.path = \(d.jsonElement("p.value", 0, integer: false))
                    WHERE true ON CONFLICT (adapter_id, realm_id) DO UPDATE SET \(d.cursorNeverBack())
                    """, arguments: [id, pairs])
        }
    }

    private func compactIfDue(_ path: String) throws {
        let due = advancesSinceCompaction.withLock { counts -> Bool in
            counts[path, default: 0] += 1
            guard counts[path]! >= compactionInterval else { return false }
            counts[path] = 0
            return true
        }
        if due {
            let removed = try store.compact(path)
            if removed > 0 {
                logger.debug("Compacted history", metadata: ["realm.path": "\(path)", "transactions": "\(removed)"])
            }
        }
    }

    /// How many transactions of the Realm at `path` this adapter has still to process (after
    /// its cursor, not its own).
    public func pendingCount(_ path: String) throws -> Int {
        guard follows(path) else { return 0 }
        let origin = self.origin
        return try store.read { db in
            guard let r = try RealmStore.realmRow(db, path) else { return 0 }
            return try Int.fetchOne(
                db, sql: "SELECT count(*) FROM history WHERE realm_id = ? AND version > ? AND origin <> ?",
                arguments: [r.id, try cursorVersion(db, r.id), origin]) ?? 0
        }
    }

    /// The followed Realms with transactions this adapter has still to process (after its
    /// cursor, not its own), and how many each, in path order: one query, which passes over a
    /// Realm whose cursor is at its version without reading its history.
    public func pendingCounts() throws -> [(path: String, count: Int)] {
        let rows = try store.read { db in
            try StoreRow.fetchAll(
                db,
                sql: """
                    SELECT path, n FROM (
                        SELECT r.path AS path, (SELECT count(*) FROM history h WHERE h.realm_id = r.id
                                                AND h.version > coalesce(c.version, 0) AND h.origin <> ?) AS n
                        FROM realm r LEFT JOIN adapter_cursor c ON c.adapter_id = ? AND c.realm_id = r.id
                        WHERE r.version > coalesce(c.version, 0)) AS pending
                    WHERE n > 0 ORDER BY path
                    """, arguments: [origin, id])
        }
        return rows.map { (path: $0[0] as String, count: $0[1] as Int) }.filter { follows($0.path) }
    }

    /// The followed Realms whose cursor is below their version (whatever the transactions after
    /// it are): one scan of the Realms.
    func pathsBehind() throws -> [String] {
        try store.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT r.path FROM realm r LEFT JOIN adapter_cursor c ON c.adapter_id = ? AND c.realm_id = r.id
                    WHERE r.version > coalesce(c.version, 0)
                    """, arguments: [id])
        }.filter(follows)
    }

    /// Up to `limit` transactions this adapter has not advanced past, oldest first, without its
    /// own, and no more than needed to reach `maxInstructions` (at least one): for connectors
    /// that apply several at once (``advance(_:through:durable:)`` after).
    ///
    /// - Parameter version: read after this version instead of the cursor, when it is past the
    ///   cursor (to read ahead while the transactions before it are still being sent).
    public func pending(_ path: String, after version: Int64 = 0, limit: Int, maxInstructions: Int = .max) throws
        -> [RealmTransaction]
    {
        guard follows(path) else { return [] }
        let origin = self.origin
        return try store.read { db in
            guard let r = try RealmStore.realmRow(db, path) else { return [] }
            let cursor = max(try cursorVersion(db, r.id), version)
            if cursor < r.compactedThrough {
                throw RealmAdapterError.adapterBehindCompaction(
                    adapter: name, path: path, cursor: cursor, compactedThrough: r.compactedThrough)
            }
            let rows = try StoreRow.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT \(RealmStore.historyColumns) FROM history
                        WHERE realm_id = ? AND version > ? AND origin <> ? ORDER BY version LIMIT ?
                        """), arguments: [r.id, cursor, origin, limit])
            var out: [RealmTransaction] = []
            var instructions = 0
            while instructions < maxInstructions, let row = try rows.next() {
                let tx = try RealmStore.transaction(row)
                instructions += tx.instructions.count
                out.append(tx)
            }
            return out
        }
    }

    /// Moves past every transaction up to `version` (after ``pending(_:after:limit:maxInstructions:)``, or to resume
    /// from what a target system recorded after a crash between its commit and the advance).
    /// A cursor never moves back.
    public func advance(_ path: String, through version: Int64, durable: Bool = true) throws {
        replaying.withLock { _ = $0.removeValue(forKey: path) }
        try store.writeMeta(durable: durable) { db in
            guard let r = try RealmStore.realmRow(db, path) else { return }
            try setCursor(db, r.id, min(version, r.version))
        }
        try compactIfDue(path)
    }

    private func setCursor(_ db: any StoreConnection, _ realmId: Int64, _ version: Int64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO adapter_cursor (adapter_id, realm_id, version) VALUES (?, ?, ?)
                ON CONFLICT(adapter_id, realm_id) DO UPDATE SET \(db.dialect.cursorNeverBack())
                """
        ).execute(arguments: [id, realmId, version])
    }

    /// Where each Realm of `asks` stands for this adapter, in one read: its version, how far its
    /// history is compacted, this adapter's cursor, and whether a transaction not of `origin`
    /// comes after the version given (and the cursor and the compaction). Paths without a Realm
    /// are left out.
    func standings(_ asks: [(path: String, foreignAfter: Int64)], origin: String) throws -> [String: RealmStanding] {
        try store.read { db in
            // One statement for all of them, as a JSON array of [path, version] (each element finds
            // its Realm by the path index).
            let pairs = RealmStore.jsonArray(asks.map { ($0.path, $0.foreignAfter) })
            let d = db.dialect
            let after = d.greatest(
                d.jsonElement("p.value", 1, integer: true), "coalesce(c.version, 0)", "r.compacted_through")
            let rows = try StoreRow.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT p.key, r.version, r.compacted_through, coalesce(c.version, 0),
                               EXISTS (SELECT 1 FROM history h WHERE h.realm_id = r.id AND h.origin <> ?3
                                       AND h.version > \(after))
                        FROM \(d.jsonArrayElements("?1", as: "p")) \(d.orderedJoin) realm r
                        ON r.path = \(d.jsonElement("p.value", 0, integer: false))
                        LEFT JOIN adapter_cursor c ON c.adapter_id = ?2 AND c.realm_id = r.id
                        """), arguments: [pairs, id, origin])
            var out: [String: RealmStanding] = [:]
            while let row = try rows.next() {
                out[asks[row[0]].path] = RealmStanding(
                    version: row[1], compactedThrough: row[2], cursor: row[3], hasForeign: row[4])
            }
            return out
        }
    }

    /// The version this adapter has advanced to on `path` (0 if never).
    public func cursor(_ path: String) throws -> Int64 {
        try store.read { db in
            guard let r = try RealmStore.realmRow(db, path) else { return 0 }
            return try cursorVersion(db, r.id)
        }
    }

    /// Paths of followed Realms that have transactions for this adapter: first those pending
    /// now, then each as new transactions commit (in this process or another). The same path
    /// may come more than once; ``current(_:)`` returning nil just means nothing is left.
    public func pathsWithChanges() -> AsyncStream<String> {
        let changes = store.changes()  // subscribe first, so nothing slips between the scan and the stream
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let task = Task { [self] in
            do {
                let pending = try await store.perform { try self.pendingCounts().map(\.path) }
                for path in pending { continuation.yield(path) }
            } catch {
                logger.warning("Could not scan Realms for pending transactions", metadata: ["error": "\(error)"])
            }
            // A change of only this adapter's own transactions has nothing for it (per-user Realms:
            // the daemon's database changes would otherwise have each Realm looked at again).
            for await change in changes where follows(change.path) && change.origins != [origin] {
                continuation.yield(change.path)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// A writer for the Realm at `path` whose transactions carry this adapter's origin, so its
    /// own ``current(_:)`` never returns them (other adapters do see them).
    public func realm(at path: String) -> AdapterRealm { AdapterRealm(adapter: self, path: path) }

    private func cursorVersion(_ db: any StoreConnection, _ realmId: Int64) throws -> Int64 {
        let sql = "SELECT version FROM adapter_cursor WHERE adapter_id = ? AND realm_id = ?"
        return try Int64.fetchOne(db.cachedStatement(sql: sql), arguments: [id, realmId]) ?? 0
    }
}

/// Where a Realm stands for an adapter (``Adapter/standings(_:origin:)``).
struct RealmStanding {
    var version: Int64
    var compactedThrough: Int64
    var cursor: Int64
    /// Whether a transaction of another origin follows the version asked about.
    var hasForeign: Bool
}

/// A Realm opened for writing by an adapter (the legacy `realmAtPath`).
public struct AdapterRealm: Sendable {
    public let adapter: Adapter
    public let path: String

    /// Applies instructions with the adapter's origin; see `RealmStore.apply(_:to:origin:sourcePosition:)`.
    @discardableResult
    public func apply(_ instructions: [Instruction], sourcePosition: SourcePosition? = nil) throws -> Int64 {
        try adapter.store.apply(instructions, to: path, origin: adapter.origin, sourcePosition: sourcePosition)
    }

    /// Runs a write transaction with the adapter's origin; see ``RealmStore/write(to:origin:sourcePosition:_:)``.
    @discardableResult
    public func write<T>(sourcePosition: SourcePosition? = nil, _ body: (inout WriteTransaction) throws -> T) throws
        -> (result: T, version: Int64)
    {
        try adapter.store.write(to: path, origin: adapter.origin, sourcePosition: sourcePosition, body)
    }
}

extension RealmStore {
    /// A write to the store's own bookkeeping (adapters, cursors), not to any Realm.
    ///
    /// With `durable: false` the commit is not flushed to disk on its own (a later durable
    /// commit flushes it): for state that another record can restore after a power loss, such
    /// as an adapter cursor whose target system records what it applied.
    func writeMeta<T>(durable: Bool = true, _ body: (any StoreConnection) throws -> T) throws -> T {
        try write(durable ? .asOpened : .deferred, body)
    }
}
