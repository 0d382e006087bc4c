extension DatabaseTransaction {
    /// Whether it may be applied merged with its neighbours: a whole transaction of others (an
    /// own one carries markers that move the database's order between Realm versions, and a part
    /// is as large as the connector lets a transaction be held).
    var merges: Bool { !isOwn && !isPart && markers.isEmpty && missedRows.isEmpty }

    /// Consecutive database transactions of others as one, at the position of the last: their
    /// changes in commit order, the columns to read back of each. Applied in one store
    /// transaction, they are in the Realms all or none, and a replay skips each of them (its
    /// position is at or before the recorded one), so exactly-once holds as it does for one.
    static func merged(_ run: [DatabaseTransaction]) -> DatabaseTransaction {
        precondition(!run.isEmpty && run.allSatisfy(\.merges), "only transactions of others merge")
        guard run.count > 1, var merged = run.last else { return run[0] }
        merged.changes = run.flatMap(\.changes)
        for tx in run.dropLast() {
            merged.readBack.merge(tx.readBack) { later, earlier in later + earlier.filter { !later.contains($0) } }
        }
        return merged
    }

    /// `transactions` in order, each run of transactions of others that together hold at most
    /// `maxChanges` changes merged into one (a transaction larger than that stays as it is).
    ///
    /// - Parameter after: the highest position any Realm holds from this source when the stream
    ///   started. A transaction at or before it may be a replay that some Realms hold and others
    ///   do not: it stays alone, so that each Realm skips it or applies it by its own position (in
    ///   a merged run, a Realm that holds its first transactions would get them again).
    static func mergingRuns(_ transactions: [DatabaseTransaction], maxChanges: Int, after: String? = nil) -> [(
        merged: DatabaseTransaction, originals: ArraySlice<DatabaseTransaction>
    )] {
        func merges(_ tx: DatabaseTransaction) -> Bool { tx.merges && after.map { tx.position > $0 } ?? true }
        var result: [(merged: DatabaseTransaction, originals: ArraySlice<DatabaseTransaction>)] = []
        var start = transactions.startIndex
        while start < transactions.endIndex {
            var end = start + 1
            if merges(transactions[start]) {
                var changes = transactions[start].changes.count
                while end < transactions.endIndex, merges(transactions[end]),
                    changes + transactions[end].changes.count <= maxChanges
                {
                    changes += transactions[end].changes.count
                    end += 1
                }
            }
            let run = transactions[start..<end]
            result.append((run.count == 1 ? run[start] : merged(Array(run)), run))
            start = end
        }
        return result
    }
}
