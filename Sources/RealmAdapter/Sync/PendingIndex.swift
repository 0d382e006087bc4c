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

    /// The writes after version `from` of `path` that concern `changes` (origin `own` excluded).
    func pendingWrites(store: RealmStore, path: String, after from: Int64, excludingOrigin own: String,
                       concerning changes: [ObjectChange]) throws -> PendingWrites {
        var s = state.withLock { $0[path] } ?? PathState()
        s.transactions.removeAll { $0.version <= from }
        let start = max(from, s.indexedThrough, try store.compactedThrough(path))
        if try store.version(of: path) > start {
            for tx in try store.history(of: path, after: start) {
                if tx.origin != own { s.transactions.append(tx) }
                s.indexedThrough = tx.version
            }
        }
        let snapshot = s
        state.withLock { $0[path] = snapshot }
        return s.transactions.isEmpty ? .none : PendingWrites(s.transactions, concerning: changes)
    }
}
