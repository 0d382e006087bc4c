import Logging

/// Runs `body`, and runs it again after transient errors with the configured backoff
/// (`database.retry`): the daemon's start and both sync directions use it.
package func withRetries<T>(
    _ retry: DatabaseConfiguration.Retry, connector: any RelationalConnector, logger: Logger,
    what: String, metrics: SyncMetrics? = nil, _ body: () async throws -> T
) async throws -> T {
    var attempt = 1
    while true {
        let started = ContinuousClock.now
        do {
            return try await body()
        } catch  where !connector.isTransient(error) && !error.isStoreUnreachable {
            metrics?.errors.increment()
            // The daemon stops on it: the server's details (they may quote row values) at debug level only.
            logger.debug(
                "Stopping on an error", metadata: ["direction": "\(what)", "error": "\(String(reflecting: error))"])
            throw error
        } catch  where (connector.isTransient(error) || error.isStoreUnreachable) && !Task.isCancelled {
            metrics?.errors.increment()
            metrics?.reconnects.increment()
            // A connection that worked for a while starts a fresh series of attempts.
            attempt = ContinuousClock.now - started > .seconds(60) ? 2 : attempt + 1
            if retry.attempts > 0 && attempt > retry.attempts {
                logger.error(
                    "Giving up after \(retry.attempts) attempts",
                    metadata: ["direction": "\(what)", "error": "\(error)"])
                throw error
            }
            let delay = retry.delay(beforeAttempt: attempt)
            logger.warning(
                "Connection problem; retrying",
                metadata: ["direction": "\(what)", "attempt": "\(attempt)", "delay": "\(delay)", "error": "\(error)"])
            try await Task.sleep(for: delay)
        }
    }
}

extension Error {
    /// Whether this is the store's database out of reach (a Postgres store's server restarting):
    /// the daemon tries again with its backoff, as for the synced database.
    package var isStoreUnreachable: Bool {
        let store = self as? StoreError ?? (self as? RealmAdapterError)?.underlying as? StoreError
        return store?.kind == .unreachable
    }
}
