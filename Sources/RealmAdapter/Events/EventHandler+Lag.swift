extension EventHandler {
    /// How far behind a handler is: the transactions it has still to handle, over how many
    /// Realms, and when the oldest of them was committed; and its dead letters.
    public struct Lag: Sendable {
        public var pending: Int
        public var realms: Int
        public var oldest: Timestamp?
        public var deadLetters: [EventDeadLetter]

        /// Nothing to handle (a store with no Realms yet).
        public static let caughtUp = Lag(pending: 0, realms: 0, oldest: nil, deadLetters: [])
    }

    /// This handler's ``Lag`` now.
    public func lag() throws -> Lag {
        let counts = try adapter.pendingCounts()
        var oldest: Timestamp?
        // The oldest pending transaction of (at most) the first thousand Realms behind.
        for (path, _) in counts.prefix(1000) {
            if let t = try adapter.pending(path, limit: 1).first?.committedAt, oldest.map({ t < $0 }) ?? true {
                oldest = t
            }
        }
        return Lag(
            pending: counts.reduce(0) { $0 + $1.count }, realms: counts.count, oldest: oldest,
            deadLetters: try EventDeadLetter.all(in: adapter.store, handler: name))
    }
}
