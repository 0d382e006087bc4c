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

    /// The writes of `path` after the database-order cursor that concern `changes` (origin `own`
    /// excluded). `standing(indexed)` reads the cursor with the Realm's version and compaction,
    /// and whether a write of another origin follows `indexed`: history is read only then.
    func pendingWrites(store: RealmStore, path: String, excludingOrigin own: String, concerning changes: [ObjectChange],
                       standing read: (Int64) throws -> RealmStanding?) throws -> PendingWrites {
        var s = state.withLock { $0[path] } ?? PathState()
        guard let standing = try read(s.indexedThrough) else { return .none }
        let from = standing.cursor
        s.transactions.removeAll { $0.version <= from }
        let start = max(from, s.indexedThrough, standing.compactedThrough)
        if !standing.hasForeign {
            s.indexedThrough = max(s.indexedThrough, standing.version)
        } else if standing.version > start {
            // Own transactions (the daemon's database changes, mostly) are not even read.
            let found = try store.history(of: path, after: start, excludingOrigin: own)
            s.transactions += found
            // Read after `standing`: it covers every version up to the Realm's then, and maybe more.
            s.indexedThrough = max(s.indexedThrough, standing.version, found.last?.version ?? 0)
        }
        let snapshot = s
        state.withLock { $0[path] = snapshot }
        return s.transactions.isEmpty ? .none : PendingWrites(s.transactions, concerning: changes)
    }
}
