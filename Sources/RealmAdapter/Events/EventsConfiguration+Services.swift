import Logging

extension EventsConfiguration {
    /// One event handler per webhook, each with its own cursors (a failing endpoint holds back
    /// only its own deliveries), for a `ServiceGroup`.
    ///
    /// A webhook's `types` that `schema` (the configuration's) does not have are warned about:
    /// a misspelt type would otherwise pass every transaction by without a word.
    public func services(store: RealmStore, schema: Schema, logger: Logger) throws -> [EventHandler] {
        if let unset = webhooks.lazy.compactMap(\.unsetSecret).first { throw unset }
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
