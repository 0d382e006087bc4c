import Logging
import Metrics
import RealmAdapter

/// The gauges read when `/metrics` is scraped (at most once a second; the database's at most
/// every ten seconds):
///
/// | metric | what |
/// |---|---|
/// | `realm_adapter_unsent_realm_transactions` | Realm transactions not yet sent to the database |
/// | `realm_adapter_slot_retained_wal_bytes` | the WAL the replication slot retains (Postgres) |
/// | `realm_adapter_events_pending{handler}` | transactions a webhook has still to deliver |
public enum Gauges {
    public static func daemon(
        adapter: Adapter, connector: any DatabaseConnector, webhooks: [EventHandler], logger: Logger
    ) -> @Sendable () async -> Void {
        let unsent = Gauge(label: "realm_adapter_unsent_realm_transactions")
        let retained = Gauge(label: "realm_adapter_slot_retained_wal_bytes")
        let events = self.events(webhooks, logger: logger)
        let store = ThrottledCollector(every: .seconds(1)) {
            do {
                let counts = try await adapter.store.perform { try adapter.pendingCounts() }
                unsent.record(counts.reduce(0) { $0 + $1.count })
            } catch {
                logger.debug("Could not count unsent Realm transactions", metadata: ["error": "\(error)"])
            }
            await events()
        }
        let database = ThrottledCollector(every: .seconds(10)) {
            do {
                if let bytes = try await connector.retainedBytes() { retained.record(bytes) }
            } catch {
                logger.debug("Could not read the retained WAL", metadata: ["error": "\(error)"])
            }
        }
        return {
            await store.collect()
            await database.collect()
        }
    }

    /// `realm_adapter_events_pending{handler}` for each webhook.
    public static func events(_ webhooks: [EventHandler], logger: Logger) -> @Sendable () async -> Void {
        let gauges = webhooks.map {
            (Gauge(label: "realm_adapter_events_pending", dimensions: [("handler", $0.name)]), $0)
        }
        return {
            for (gauge, handler) in gauges {
                do {
                    let lag = try await handler.adapter.store.perform { try handler.lag() }
                    gauge.record(lag.pending)
                } catch {
                    logger.debug("Could not read a webhook's lag", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
