import Metrics
import RealmAdapter

/// Whether the store answers, for `/health/ready` and the gauge `realm_adapter_store_up{backend}`
/// (1 or 0): a Postgres store's database may be down while the process lives.
public struct StoreHealth: Sendable {
    let store: RealmStore
    let gauge: Gauge

    public init(_ store: RealmStore) {
        self.store = store
        gauge = Gauge(label: "realm_adapter_store_up", dimensions: [("backend", store.engine)])
    }

    /// Nil when the store answers a read now; otherwise why it does not. Records the gauge.
    public func problem() async -> String? {
        do {
            try await store.perform { try store.checkReachable() }
            gauge.record(1)
            return nil
        } catch {
            gauge.record(0)
            let reason = (error as? RealmAdapterError)?.message ?? "\(error)"
            return "the Realm store (\(store.engine), \(store.directory)) does not answer: \(reason)"
        }
    }
}
