import Dispatch
import Logging
import Synchronization

/// A Realm that has new transactions.
public struct RealmChange: Hashable, Sendable {
    public var path: String
    /// The Realm's latest version when the change was seen.
    public var version: Int64
    /// The origins of the new transactions (an adapter skips a change that holds only its own).
    public var origins: Set<String> = []
}

/// Tells subscribers which Realms have new transactions, whoever wrote them.
///
/// History rows have a strictly increasing id (AUTOINCREMENT), so "what is new" is one indexed
/// query for rows past the last id seen. Commits in this process check at once; commits by
/// other processes are found by polling every `interval` on a private queue. A poll asks a
/// connection of its own for `PRAGMA data_version`, which moves when any other connection
/// commits, and reads history only if it moved: an idle store costs one pragma per poll, not a
/// read transaction and a query. Polling runs only while someone listens.
final class ChangeNotifier: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<RealmChange>.Continuation] = [:]
        var nextId = 0
        var lastHistoryId: Int64 = -1
        var polling = false
        /// Bumped each time polling starts, so a loop left over from an earlier start ends.
        var generation = 0
    }

    private let backend: any StoreBackend
    /// Tells whether anything was committed, by any process: a poll that finds nothing reads
    /// nothing else.
    private let probe: any StoreCommitProbe
    private let interval: Duration
    private let logger: Logger
    private let queue = DispatchQueue(label: "realm-adapter.store.notifier")
    private let state = Mutex(State())

    init(backend: any StoreBackend, interval: Duration, logger: Logger) {
        self.backend = backend
        probe = backend.makeCommitProbe()
        self.interval = interval
        self.logger = logger
    }

    /// A stream of changes from now on. Finishing iteration (or cancelling the task) unsubscribes.
    func subscribe() -> AsyncStream<RealmChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: RealmChange.self, bufferingPolicy: .unbounded)
        let (id, start) = state.withLock { s -> (Int, Bool) in
            let id = s.nextId
            s.nextId += 1
            s.subscribers[id] = continuation
            let start = !s.polling
            if start {
                s.polling = true
                s.generation += 1
            }
            return (id, start)
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        if start {
            // Set the baseline before returning, so that a commit made after subscribe() returns
            // is always reported, even if it lands before the first poll.
            queue.sync { self.check() }
            schedulePoll(generation: state.withLock { $0.generation })
        }
        return stream
    }

    /// Checks for new transactions now (called after every commit in this process).
    func poke() {
        guard state.withLock({ !$0.subscribers.isEmpty }) else { return }
        queue.async { self.check(probing: false) }
    }

    private func unsubscribe(_ id: Int) {
        state.withLock { s in
            s.subscribers[id] = nil
            if s.subscribers.isEmpty { s.polling = false }
        }
    }

    private func schedulePoll(generation: Int) {
        let ns = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(max(ns, 1_000_000))) { [weak self] in
            guard let self, self.state.withLock({ $0.polling && $0.generation == generation }) else { return }
            self.check()
            self.schedulePoll(generation: generation)
        }
    }

    /// Runs on `queue` only.
    /// - Parameter probing: whether to read history only if the probe saw a commit (polls), or
    ///   at once (a commit in this process: the probe would only say so).
    private func check(probing: Bool = true) {
        let last = state.withLock { $0.lastHistoryId }
        guard last < 0 || !probing || probe.committedSinceLastCheck() else { return }
        do {
            let (maxId, changes) = try backend.read { db -> (Int64, [RealmChange]) in
                let maxId = try Int64.fetchOne(db, sql: "SELECT coalesce(max(id), 0) FROM history") ?? 0
                // The first check only sets the baseline: subscribers ask for what is pending themselves.
                guard last >= 0, maxId > last else { return (maxId, []) }
                // Grouped without the (realm, version) index, which would scan all history.
                let d = db.dialect
                let rows = try StoreRow.fetchAll(
                    db,
                    sql: """
                        SELECT r.path, max(h.version), \(d.distinctList("h.origin"))
                        FROM history h JOIN realm r ON r.id = h.realm_id
                        WHERE h.id > ? GROUP BY r.path, \(d.unindexed("h.realm_id"))
                        """, arguments: [last])
                return (
                    maxId,
                    rows.map { row in
                        // Origins are adapter names and tags without commas in practice; a comma only splits one in two
                        // (the change is then not skipped, which is always safe).
                        let origins = Set((row[2] as String? ?? "").split(separator: ",").map(String.init))
                        return RealmChange(path: row[0], version: row[1], origins: origins)
                    }
                )
            }
            let subscribers = state.withLock { s -> [AsyncStream<RealmChange>.Continuation] in
                s.lastHistoryId = max(s.lastHistoryId, maxId)
                return Array(s.subscribers.values)
            }
            for c in changes { for s in subscribers { s.yield(c) } }
        } catch {
            logger.warning(
                "Could not check the store for new transactions; will retry", metadata: ["error": "\(error)"])
        }
    }
}

extension RealmStore {
    /// Realms with new transactions, from any process, as they commit. The stream starts empty:
    /// read what is already there first, then follow this.
    public func changes() -> AsyncStream<RealmChange> { notifier.subscribe() }
}
