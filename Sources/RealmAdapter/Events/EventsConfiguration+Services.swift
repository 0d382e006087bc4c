import Logging

extension EventsConfiguration {
    /// One event handler per webhook, each with its own cursors (a failing endpoint holds back
    /// only its own deliveries), for a `ServiceGroup`.
    ///
    /// A webhook's `types` that `schema` (the configuration's) does not have are warned about:
    /// a misspelt type would otherwise pass every transaction by without a word.
    public func services(store: RealmStore, schema: Schema, logger: Logger) throws -> [EventHandler] {
        for w in webhooks {
            let unknown = (w.types ?? []).filter { schema[type: $0] == nil }.sorted()
            guard !unknown.isEmpty else { continue }
            logger.warning(
                """
                A webhook names types the configuration's schema does not have; transactions that change none of \
                its types are passed by, not sent. Check the spelling (types are case-sensitive).
                """,
                metadata: ["webhook": "\(w.name)", "types": "\(unknown.joined(separator: ", "))"])
        }
        return try webhooks.map { try Webhook($0).handler(store: store, retry: retry, logger: logger) }
    }
}

extension EventHandler {
    /// How far behind a handler is: the transactions it has still to handle, over how many
    /// Realms, and when the oldest of them was committed; and its dead letters.
    public struct Lag: Sendable {
        public var pending: Int
        public var realms: Int
        public var oldest: Timestamp?
        public var deadLetters: [EventDeadLetter]
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
