import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Database → Realm: follows the connector's change stream and applies each transaction.
///
/// Own transactions (the Realm → database direction's writes) are not applied: a change
/// travels once. Their markers tell which Realm versions the database holds at that point of
/// its commit order; a second cursor (`<adapter>~database`) keeps that position durably, and
/// the Realm writes after it are the pending writes of the convergence rule (``PendingWrites``).
/// Transient errors (a lost connection, a restarting server) reconnect with the
/// configured backoff and resume from the last confirmed position; any other error stops the
/// daemon with the transaction unconfirmed, so it is retried on the next start.
///
/// It refuses to start after an interrupted load (``Loader/requireFinishedLoad(_:source:)``):
/// the Realms then hold part of a snapshot that following the stream would not complete.
public final class DatabaseToRealmService: Service {
    let connector: any RelationalConnector
    let applier: RealmApplier
    let adapter: Adapter
    /// Where the database's commit order has reached in each Realm's history.
    let databaseCursor: Adapter
    let retry: DatabaseConfiguration.Retry
    /// Rows no Realm can hold are set aside (``RelationalConnector/setAside(_:)``) instead of
    /// stopping the daemon.
    let ignoreSQLErrors: Bool
    let logger: Logger
    let metrics = SyncMetrics(.databaseToRealm)
    /// Whether its change stream runs (`/health/ready`).
    public let health = SyncHealth()

    public init(
        connector: any RelationalConnector, applier: RealmApplier, adapter: Adapter, retry: DatabaseConfiguration.Retry,
        ignoreSQLErrors: Bool = false, logger: Logger
    ) throws {
        try Loader.requireFinishedLoad(applier.store, source: applier.source)
        self.connector = connector
        self.applier = applier
        self.adapter = adapter
        self.databaseCursor = try adapter.databaseOrderCursor(logger: logger)
        self.retry = retry
        self.ignoreSQLErrors = ignoreSQLErrors
        self.logger = logger
    }

    /// Sets rows aside in the database, and says so at error level (no values: they are in the table).
    func setAside(_ rows: [SetAsideRow]) throws {
        try connector.setAside(rows)
        metrics.deadLetters.increment(by: rows.count)
        for r in rows {
            logger.error(
                "A database row no Realm can hold was set aside in realm_adapter_dead_row (ignoreSQLErrors)",
                metadata: ["db.table": "\(r.table)", "position": "\(r.position)", "error": "\(r.error)"])
        }
    }

    private let index = PendingIndex()
    /// Whether "Syncing" was logged (once, when the stream first runs).
    private let saidSyncing = Mutex(false)
    /// Tables whose changes arrived though the mapping does not know them (warned about once each).
    private let unknownTables = Mutex(Set<String>())

    /// Says once per table, at warning level, that its changes are skipped: nothing is dropped silently.
    func warnAboutUnknownTables(_ tx: DatabaseTransaction) {
        let mapping = applier.mapping
        var previous = ""  // a transaction's changes mostly come in runs of one table: checked once a run
        func check(_ table: String) {
            guard table != previous else { return }
            previous = table
            guard mapping.table(named: table) == nil, mapping.linkList(named: table) == nil,
                unknownTables.withLock({ $0.insert(table).inserted })
            else { return }
            logger.warning(
                """
                Changes to a table the mapping does not know are skipped (it is in the publication, or a \
                partition published on its own)
                """,
                metadata: ["db.table": "\(table)"])
        }
        for change in tx.changes {
            switch change {
            case .insert(let table, _), .update(let table, _, _), .delete(let table, _): check(table)
            case .truncate(let tables): tables.forEach(check)
            }
        }
    }

    /// The Realm writes the database does not hold yet as of the transaction being applied, by path.
    func pendingWrites(_ groups: [(path: String, changes: [ObjectChange])]) throws -> [String: PendingWrites] {
        let (cursor, origin) = (databaseCursor, adapter.origin)
        return try index.pendingWrites(store: adapter.store, groups, excludingOrigin: origin) { asks in
            try cursor.standings(asks, origin: origin)
        }
    }

    public func run() async throws {
        try await withRetries(retry, connector: connector, logger: logger, what: "database → Realm", metrics: metrics) {
            do {
                try await follow()
            } catch {
                // Not the error itself: a database's message may quote row values.
                health.notStreaming("the change stream stopped (the log says why)")
                throw error
            }
        }
    }

    /// Follows the change stream until it ends or fails.
    private func follow() async throws {
        try Failpoint.dbToRealmBeforeStream.hit()
        let stream = try await connector.changes()
        health.streaming()
        try Self.recordFollowing(applier.store, source: connector.sourceName)
        if saidSyncing.withLock({ said in
            defer { said = true }
            return !said
        }) {
            logger.info(
                "Syncing", metadata: ["realm.store": "\(applier.store.directory)", "adapter": "\(adapter.name)"])
        }
        // Transactions that arrived while the last ones were applied are applied together (a
        // run of others' transactions in one store transaction), so a daemon that falls behind
        // catches up in larger commits instead of staying behind. Not those a Realm may hold
        // already (a replay after a restart): each goes alone, so that each Realm skips exactly
        // the ones it holds, by position.
        let replayedThrough = try await applier.store.perform { [applier] in
            try applier.store.latestPosition(from: applier.source, origin: applier.origin)
        }
        var blockedAt = try await applier.store.perform { [applier] in
            try BlockedRow.current(in: applier.store, source: applier.source, origin: applier.origin)?.position
        }
        let ahead = ReadAhead(stream.cancelOnGracefulShutdown(), limit: Self.readAhead)
        try await withThrowingTaskGroup(of: Void.self) { pump in
            pump.addTask { await ahead.run() }
            defer {
                ahead.close()
                pump.cancelAll()
            }
            while case let arrived = try await ahead.next(atMost: Self.readAhead), !arrived.isEmpty {
                // Not while an event handler or webhook follows the Realms (one may register at any
                // time, from another process): merged, a row inserted and deleted again would be
                // no change at all, and it would never hear of it.
                let recorded = try await applier.store.perform { [applier] in try applier.store.recordsChanges() }
                let runs = DatabaseTransaction.mergingRuns(
                    arrived, maxChanges: recorded ? 0 : Self.mergedChanges, after: replayedThrough)
                for (tx, originals) in runs {
                    for _ in originals { try Failpoint.dbToRealmReceived.hit() }
                    try await applyRecordingABlock(tx)
                    if let at = blockedAt, tx.position >= at {
                        try await applier.store.perform { [applier] in
                            try BlockedRow.clear(in: applier.store, source: applier.source)
                        }
                        blockedAt = nil
                    }
                    for original in originals {
                        if !original.isOwn { metrics.applied(original) }
                        connector.processed(original)
                    }
                    // Stopping (SIGTERM, or another service failed): what was read ahead and not
                    // applied comes again on the next start.
                    if Task.isShuttingDownGracefully || Task.isCancelled { return }
                }
            }
        }
    }

    /// How many transactions are read ahead of the one being applied, at most.
    static let readAhead = 256
    /// How many changes transactions merged into one store transaction hold, at most.
    static let mergedChanges = 5_000

    /// ``apply(_:)``; a change no Realm can hold stops the daemon recorded as a ``BlockedRow``,
    /// for `status`.
    private func applyRecordingABlock(_ tx: DatabaseTransaction) async throws {
        do {
            try await apply(tx)
        } catch let e as RealmAdapterError where e.code == .invalidValue {
            let blocked = BlockedRow(position: tx.position, error: e.message)
            try? await applier.store.perform { [applier] in
                try blocked.record(in: applier.store, source: applier.source)
            }
            throw e
        }
    }

    /// Applies one database transaction (or a merged run of them) to the Realms.
    private func apply(_ tx: DatabaseTransaction) async throws {
        if !tx.isOwn { warnAboutUnknownTables(tx) }
        let (applier, adapter, cursor, connector) = (self.applier, self.adapter, self.databaseCursor, self.connector)
        let paths = try await applier.store.perform {
            // An own transaction moves the database's order past the Realm versions it holds;
            // of its rows only what the database added comes back (RealmApplier.apply).
            for m in tx.markers where tx.isOwn && m.adapter == adapter.name {
                try cursor.advance(m.path, through: m.version)
            }
            return try applier.apply(
                tx, pending: self.pendingWrites, linkList: { try connector.linkList($0, owner: $1) },
                row: { try connector.row($0, key: $1, columns: $2) },
                writeRealmIds: { try connector.writeRealmIds($0) },
                setAside: self.ignoreSQLErrors ? { try self.setAside($0) } : nil)
        }
        if !paths.isEmpty {
            logger.debug(
                "Applied a database transaction",
                metadata: ["position": "\(tx.position)", "realm.paths": "\(paths)", "changes": "\(tx.changes.count)"])
            try Failpoint.dbToRealmAfterCommit.hit()
        }
    }
}

extension DatabaseToRealmService {
    /// The store metadata key recording that a daemon followed `source`'s stream with this store.
    static func followKey(source: String) -> String { "follow:\(source)" }

    /// Throws if following the stream from `start` would leave a gap in the Realms: the stream
    /// existed before this start but this store never loaded from it nor followed it (a new
    /// store, or one deleted under a running daemon), or the stream was created anew while this
    /// store had followed an earlier one (its slot dropped behind the adapter's back).
    public static func requireStoreFollows(_ store: RealmStore, source: String, start: StreamStart) throws {
        let followed =
            try store.metadata(followKey(source: source)) != nil
            || store.metadata(Loader.stateKey(source: source)) != nil || store.holdsChanges(from: source)
        switch start {
        case .resumed where !followed: throw RealmAdapterError.storeNeverFollowed(source: source)
        case .created where followed: throw RealmAdapterError.streamLost(source: source)
        case .resumed, .created, .restarted: break
        }
    }

    /// Records that this store follows `source`'s stream, once the stream has started (a
    /// start that failed before leaves the store as it was).
    static func recordFollowing(_ store: RealmStore, source: String) throws {
        guard try store.metadata(followKey(source: source)) == nil else { return }
        try store.setMetadata(followKey(source: source), "since \(Timestamp(Date()).iso8601)")
    }
}

extension RealmAdapterError {
    static func storeNeverFollowed(source: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "The database's change stream (\(source)) exists, but this store has never loaded from it or "
                + "followed it (a new store, or one deleted while a daemon ran?): following it now would "
                + "give the Realms only the changes from here on. Run `realm-adapter load` (it starts "
                + "the stream again from a snapshot), then start the daemon.",
            context: ["source": source])
    }

    static func streamLost(source: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "The database's change stream (\(source)) that this store followed is gone (its replication slot "
                + "was dropped?), so changes made since are not in the Realms. Run `realm-adapter load` (it "
                + "starts the stream again from a snapshot), then start the daemon; or set "
                + "database.resetReplicationSlot to start over from now on purpose.",
            context: ["source": source])
    }
}

extension Adapter {
    /// The second cursor of a two-way adapter (`<name>~database`): how far the database's
    /// commit order has reached in each Realm's history (see ``PendingWrites``).
    public func databaseOrderCursor(logger: Logger) throws -> Adapter {
        try Adapter(
            store: store, name: name + "~database", pathRegex: pathRegex, compactionInterval: .max, logger: logger)
    }
}

/// Realm → database: follows the Realms through the Adapter API and applies each transaction
/// to the database in one database transaction, with its (adapter, path, version) marker.
public final class RealmToDatabaseService: Service {
    let connector: any RelationalConnector
    let adapter: Adapter
    let mappings: SharedMapping
    let retry: DatabaseConfiguration.Retry
    let ignoreSQLErrors: Bool
    let applyRealmSchemaChanges: Bool
    let logger: Logger
    let metrics = SyncMetrics(.realmToDatabase)
    /// Whether a Realm transaction the database refused is waiting (`/health/ready`).
    public let health = SyncHealth()

    public convenience init(
        connector: any RelationalConnector, adapter: Adapter, mapping: Mapping, retry: DatabaseConfiguration.Retry,
        ignoreSQLErrors: Bool, logger: Logger
    ) {
        self.init(
            connector: connector, adapter: adapter, mappings: SharedMapping(mapping), retry: retry,
            ignoreSQLErrors: ignoreSQLErrors,
            applyRealmSchemaChanges: false, logger: logger)
    }

    /// - Parameter applyRealmSchemaChanges: types and properties that the Realms add to the
    ///   configured schema are created in the database (``RelationalConnector/applyRealmSchema(_:)``)
    ///   and synced both ways from then on (`mappings` is shared with the other direction).
    public init(
        connector: any RelationalConnector, adapter: Adapter, mappings: SharedMapping,
        retry: DatabaseConfiguration.Retry,
        ignoreSQLErrors: Bool, applyRealmSchemaChanges: Bool, logger: Logger
    ) {
        self.connector = connector
        self.adapter = adapter
        self.mappings = mappings
        self.retry = retry
        self.ignoreSQLErrors = ignoreSQLErrors
        self.applyRealmSchemaChanges = applyRealmSchemaChanges
        self.logger = logger
    }

    /// Extends the mapping with what the Realm's schema adds and creates it in the database.
    func adoptRealmSchema(_ path: String) async throws {
        let store = adapter.store
        let realmSchema = try await store.perform { try store.schema(of: path) }
        guard let (mapping, added, skipped) = try mappings.current.adding(realmSchema: realmSchema) else { return }
        try await connector.applyRealmSchema(mapping)
        mappings.replace(with: mapping)
        logger.info(
            "Applied Realm schema changes to the database", metadata: ["realm.path": "\(path)", "added": "\(added)"])
        if !skipped.isEmpty {
            logger.warning(
                "Types without a primary key cannot sync; left out",
                metadata: ["realm.path": "\(path)", "types": "\(skipped)"])
        }
    }

    public func run() async throws {
        try await withRetries(retry, connector: connector, logger: logger, what: "Realm → database", metrics: metrics) {
            // Resume each Realm from what the database recorded (a crash may fall between the
            // database's commit and the adapter's advance).
            let adapter = self.adapter
            let applied = try await connector.appliedVersions(adapter: adapter.name)
            try await adapter.store.perform {
                for (path, version) in applied where try adapter.cursor(path) < version {
                    try adapter.advance(path, through: version)
                }
            }
            if applyRealmSchemaChanges {
                for path in try await adapter.store.perform({ try adapter.paths() }) {
                    try await adoptRealmSchema(path)
                }
            }
            for await path in adapter.pathsWithChanges().cancelOnGracefulShutdown() {
                try await drain(path)
            }
        }
    }

    /// How many Realm transactions one database transaction may carry when the adapter is
    /// behind (group commit): each stays whole, the marker records the last.
    public let batchLimit = 200
    /// …and at most about this many instructions, so memory stays flat however far behind it is.
    public let batchInstructions = 5_000

    /// Applies every pending transaction of one Realm.
    ///
    /// When several are waiting they go to the database together, in order, in one database
    /// transaction (one round of commits instead of one per Realm transaction); if that fails
    /// they are retried one by one, so that a rejected change is isolated (and, with
    /// `ignoreSQLErrors`, the only one dead-lettered).
    public func drain(_ path: String) async throws {
        var next = try await prepare(path)
        while let prepared = next {
            // Behind (a full batch), the next transactions are read and mapped while these go to
            // the database; a Realm that keeps up sends what it has without a task for nothing.
            let ahead =
                prepared.unmapped == nil && prepared.full
                ? Task { try await self.prepare(path, after: prepared.through, ahead: true) } : nil
            defer { ahead?.cancel() }
            try await send(prepared, path)
            if let ahead, let found = try await ahead.value { next = found } else { next = try await prepare(path) }
        }
    }

    /// A Realm's next pending transactions, mapped to database writes, up to the first that
    /// cannot be (``unmapped``, a rejected change).
    private struct Prepared: Sendable {
        var batch: [(RealmTransaction, [DatabaseWrite])]
        var unmapped: (RealmTransaction, RealmAdapterError)?
        /// Whether the read stopped at the batch's limits (more may be pending).
        var full = false
        /// The version of the last transaction read.
        var through: Int64 { unmapped?.0.version ?? batch.last?.0.version ?? 0 }
    }

    /// Reads and maps the pending transactions of `path` after its cursor, or after `version`;
    /// nil when there are none. Reading `ahead` (the ones before still being sent) stops at a
    /// schema change, which is adopted first (nil: ``prepare(_:after:ahead:)`` again after them).
    private func prepare(_ path: String, after version: Int64 = 0, ahead: Bool = false) async throws -> Prepared? {
        let (store, adapter) = (self.adapter.store, self.adapter)
        let (limit, maxInstructions) = (batchLimit, batchInstructions)
        let pending = try await store.perform {
            try adapter.pending(path, after: version, limit: limit, maxInstructions: maxInstructions)
        }
        guard !pending.isEmpty else { return nil }
        if applyRealmSchemaChanges, pending.contains(where: { $0.instructions.contains(where: \.isSchemaChange) }) {
            if ahead { return nil }
            try await adoptRealmSchema(path)
        }
        let mapping = mappings.current
        // Mapped one by one: a transaction that cannot become database writes is a rejected change.
        return try await store.perform {
            var prepared = Prepared(
                batch: [],
                full: pending.count >= limit || pending.reduce(0) { $0 + $1.instructions.count } >= maxInstructions)
            for tx in pending {
                do {
                    prepared.batch.append(
                        (
                            tx,
                            try mapping.databaseWrites(tx.instructions, path: path) { type, identity, property in
                                try store.list(property, of: type, identity: identity, in: path)
                            }
                        ))
                } catch let e as RealmAdapterError {
                    prepared.unmapped = (tx, e)
                    break
                }
            }
            return prepared
        }
    }

    /// Why `tx` cannot go to the database yet: it changes an object whose creation went to the
    /// dead-letter record and whose row the database still lacks (``UnsentObjects``; objects it
    /// has rows for now are forgotten). Nil if it can.
    private func unsentObject(_ tx: RealmTransaction, _ path: String) async throws -> RealmAdapterError? {
        let before = try await unsentObjects(path)
        guard !before.isEmpty, before.changed(by: tx.instructions) != nil else { return nil }
        let (store, name, connector, mapping) = (adapter.store, adapter.name, self.connector, mappings.current)
        let (unsent, why) = try await store.perform { () -> (UnsentObjects, RealmAdapterError?) in
            var unsent = before
            defer { if unsent != before { try? unsent.write(store, adapter: name, path: path) } }
            while let (type, identity) = unsent.changed(by: tx.instructions) {
                if let t = mapping.table(forType: type),
                    try connector.row(t.table, key: mapping.keyRow(t, identity), columns: t.keyColumns) != nil
                {
                    unsent.remove(type, identity)
                    continue
                }
                return (unsent, RealmAdapterError.changesAnUnsentObject(type: type, identity: identity))
            }
            return (unsent, nil)
        }
        unsentByPath.withLock { $0?[path] = unsent }
        return why
    }

    /// The objects of the Realm at `path` that the database never got (``UnsentObjects``), read
    /// from the store once for all Realms, then kept here: while the daemon runs it is their only
    /// writer (`realm-adapter dead-letter` refuses beside it).
    private func unsentObjects(_ path: String) async throws -> UnsentObjects {
        if let known = unsentByPath.withLock({ $0 }) { return known[path] ?? UnsentObjects() }
        let (store, name) = (adapter.store, adapter.name)
        let all = try await store.perform { try UnsentObjects.readAll(store, adapter: name) }
        unsentByPath.withLock { if $0 == nil { $0 = all } }
        return all[path] ?? UnsentObjects()
    }

    private let unsentByPath = Mutex<[String: UnsentObjects]?>(nil)

    /// Applies prepared transactions (as one database transaction when they are several; if that
    /// fails, one by one) and advances past them.
    private func send(_ prepared: Prepared, _ path: String) async throws {
        let (store, adapter, batch) = (self.adapter.store, self.adapter, prepared.batch)
        if let last = batch.last {
            do {
                // One that changes an object the database never got goes alone (to the dead letters).
                let unsent = try await unsentObjects(path)
                if !unsent.isEmpty, batch.contains(where: { unsent.changed(by: $0.0.instructions) != nil }) {
                    throw UnsentObjectsFirst()
                }
                try await commit(batch.flatMap(\.1), path, through: last.0.version)
            } catch  where (batch.count > 1 || error is UnsentObjectsFirst) && !connector.isTransient(error) {
                // Each is advanced past as it lands: one rejected stops with the cursor at it
                // (`status` names the oldest unsent transaction as the blocking one).
                for (tx, writes) in batch {
                    try await applyOne(tx, writes, path)
                    try await store.perform { try adapter.advance(path, through: tx.version, durable: false) }
                }
            } catch  where !connector.isTransient(error) {
                try await rejected(last.0, error, path)
            }
            // The state table records what the database applied: the cursor need not be flushed on its own.
            try await store.perform { try adapter.advance(path, through: last.0.version, durable: false) }
            metrics.transactions.increment(by: batch.count)
            metrics.rowChanges.increment(by: batch.reduce(0) { $0 + $1.1.count })
            logger.debug(
                "Applied Realm transactions",
                metadata: ["realm.path": "\(path)", "through": "\(last.0.version)", "count": "\(batch.count)"])
        }
        if let (tx, error) = prepared.unmapped {
            try await rejected(tx, error, path)
            try await store.perform { try adapter.advance(path, through: tx.version, durable: false) }
        }
    }

    /// Writes Realm transactions through `version` in one database transaction, with their marker.
    private func commit(_ writes: [DatabaseWrite], _ path: String, through version: Int64) async throws {
        try Failpoint.realmToDbBeforeCommit.hit()
        try await connector.apply(writes, adapter: adapter.name, path: path, version: version)
        try Failpoint.realmToDbAfterCommit.hit()
    }

    private struct UnsentObjectsFirst: Error {}

    private func applyOne(_ tx: RealmTransaction, _ writes: [DatabaseWrite], _ path: String) async throws {
        if let why = try await unsentObject(tx, path) { return try await rejected(tx, why, path) }
        do {
            try await commit(writes, path, through: tx.version)
        } catch  where !connector.isTransient(error) {
            try await rejected(tx, error, path)
        }
    }

    /// A Realm transaction the database rejected (or that cannot become database writes): with
    /// `ignoreSQLErrors` it goes to the dead-letter record; otherwise the daemon stops with it
    /// unsent, recorded as blocking (``BlockedTransaction``) for `status` and `dead-letter`.
    private func rejected(_ tx: RealmTransaction, _ error: Error, _ path: String) async throws {
        if ignoreSQLErrors { return try await deadLetter(tx, error, path) }
        let (store, adapter) = (self.adapter.store, self.adapter.name)
        let blocked = BlockedTransaction(path: path, version: tx.version, error: "\(error)")
        try await store.perform { try blocked.record(in: store, adapter: adapter) }
        health.blocked("\(path) version \(tx.version) was rejected by the database (see `realm-adapter status`)")
        logger.error(
            """
            The database rejected a change; stopping with it unsent. `realm-adapter status` shows it; fix \
            the database and start again, or move it aside with `realm-adapter dead-letter`
            """,
            metadata: ["realm.path": "\(path)", "version": "\(tx.version)", "error": "\(error)"])
        throw error
    }

    private func deadLetter(_ tx: RealmTransaction, _ error: Error, _ path: String) async throws {
        logger.error(
            "The database rejected a change; kept in the dead-letter record (ignoreSQLErrors)",
            metadata: ["realm.path": "\(path)", "version": "\(tx.version)", "error": "\(error)"])
        logger.debug(
            "The rejected change in full", metadata: ["realm.path": "\(path)", "error": "\(String(reflecting: error))"])
        try await connector.deadLetter(
            tx.instructions, error: "\(error)", adapter: adapter.name, path: path, version: tx.version)
        let (store, name) = (adapter.store, adapter.name)
        let unsent = try await store.perform {
            try UnsentObjects.record(tx.instructions, store, adapter: name, path: path)
        }
        unsentByPath.withLock { $0?[path] = unsent }
        metrics.deadLetters.increment()
        try Failpoint.realmToDbAfterDeadLetter.hit()
    }
}
