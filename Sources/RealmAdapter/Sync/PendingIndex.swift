import Synchronization

/// The Realm transactions of each path that the database may not hold yet, kept in memory so
/// the convergence rule does not read history again for every database transaction.
///
/// Transactions are added as they appear (each is read from history once) and dropped once
/// the database's commit order has passed them, so it holds at most the Realm → database lag.
final class PendingIndex: Sendable {
    private struct PathState {
        var transactions: [RealmTransaction] = []
        var indexedThrough: Int64 = 0
    }
    private let state = Mutex<[String: PathState]>([:])

    /// For each path, the writes after the database-order cursor that concern its changes
    /// (origin `own` excluded). `standings` reads, for each path and version, the cursor with the
    /// Realm's version and compaction, and whether a write of another origin follows that version,
    /// all at once (a database transaction may touch many per-user Realms): history is read only
    /// where one does.
    func pendingWrites(
        store: RealmStore, _ groups: [(path: String, changes: [ObjectChange])], excludingOrigin own: String,
        standings read: ([(path: String, foreignAfter: Int64)]) throws -> [String: RealmStanding]
    ) throws -> [String: PendingWrites] {
        let states = state.withLock { all in groups.map { all[$0.path] ?? PathState() } }
        let standings = try read(zip(groups, states).map { ($0.path, $1.indexedThrough) })
        var out: [String: PendingWrites] = [:]
        var kept: [String: PathState] = [:]
        for (g, s) in zip(groups, states) {
            guard let standing = standings[g.path] else { continue }
            var s = s
            let from = standing.cursor
            s.transactions.removeAll { $0.version <= from }
            let start = max(from, s.indexedThrough, standing.compactedThrough)
            if !standing.hasForeign {
                s.indexedThrough = max(s.indexedThrough, standing.version)
            } else if standing.version > start {
                // Own transactions (the daemon's database changes, mostly) are not even read.
                let found = try store.history(of: g.path, after: start, excludingOrigin: own)
                s.transactions += found
                // Read after `standing`: it covers every version up to the Realm's then, and maybe more.
                s.indexedThrough = max(s.indexedThrough, standing.version, found.last?.version ?? 0)
            }
            kept[g.path] = s
            if !s.transactions.isEmpty { out[g.path] = PendingWrites(s.transactions, concerning: g.changes) }
        }
        state.withLock { all in all.merge(kept) { _, new in new } }
        return out
    }
}
