import Logging
import PostgresWire
import RealmAdapter
import Synchronization

/// Tells the store's notifier of commits by any process on any machine: every write
/// transaction of a Postgres store sends `NOTIFY` on ``channel`` as it commits, and the probe
/// listens on a connection of its own. A notification lost (the probe's connection broke and
/// was made again) only delays a change: the probe also says "maybe" at least every
/// ``fallback``, and then the notifier reads the history.
package final class PostgresCommitProbe: StoreCommitProbe {
    static let channel = "realm_adapter_store"

    private struct State: @unchecked Sendable {
        // @unchecked: the connection is only used under the probe's lock.
        var connection: PostgresConnection?
        var lastMaybe = ContinuousClock.now
    }

    private let settings: PostgresSettings
    private let logger: Logger
    private let fallback: Duration
    private let state = Mutex(State())

    package init(settings: PostgresSettings, logger: Logger, fallback: Duration = .seconds(1)) {
        (self.settings, self.logger, self.fallback) = (settings, logger, fallback)
    }

    deinit { state.withLock { $0.connection?.close() } }

    package func committedSinceLastCheck() -> Bool {
        state.withLock { s in
            let now = ContinuousClock.now
            do {
                guard let connection = s.connection else {
                    let c = try PostgresConnection.connectSync(settings, logger: logger)
                    try c.sessionSync { try $0.listen(Self.channel) }
                    s.connection = c
                    s.lastMaybe = now
                    return true  // what was committed before it listened is not known
                }
                let notified = try connection.sessionSync { try !$0.notifications(waitingUpTo: .zero).isEmpty }
                guard notified || now - s.lastMaybe >= fallback else { return false }
                s.lastMaybe = now
                return true
            } catch {
                logger.debug(
                    "The store's commit listener failed; reading history instead", metadata: ["error": "\(error)"])
                s.connection?.close()
                s.connection = nil
                return true
            }
        }
    }
}
