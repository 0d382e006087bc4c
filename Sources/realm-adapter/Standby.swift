import Logging
import RealmAdapter
import RealmServer
import ServiceLifecycle
import Synchronization

/// A daemon on a store that several machines share (a Postgres store) stands by while another
/// daemon runs its adapter there, and takes over when that one stops, however it stops: the
/// daemon lock is the store's, released by the database when its holder's connection ends.
enum Standby {
    /// The daemon lock: at once, or, on a store in a database, once the daemon holding it stops.
    /// Nil when this process is told to stop while standing by.
    static func lock(
        store: RealmStore, location: StoreLocation, adapter: String, endpoint: (host: String, port: Int)?,
        logger: Logger
    ) async throws -> DaemonLock? {
        do {
            return try DaemonLock(store: store, adapter: adapter)
        } catch let e as RealmAdapterError where e.code == .invalidState && location.isDatabase {
            logger.notice(
                "Standing by: another daemon runs this adapter on the store; this one takes over when it stops",
                metadata: ["adapter": "\(adapter)", "realm.store": "\(location.text)"])
        }
        let waiter = LockWaiter(store: store, adapter: adapter, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: waiter, successTerminationBehavior: .gracefullyShutdownGroup)
        ]
        if let endpoint {
            let reason = "standing by: another daemon runs adapter '\(adapter)' on this store"
            let probes = MetricsServer.Probes(store: store, ready: { (false, reason) })
            services.append(
                .init(
                    service: MetricsServer.service(
                        host: endpoint.host, port: endpoint.port, probes: probes, logger: logger))
            )
        }
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        return waiter.lock.withLock { $0 }
    }
}

/// Tries the daemon lock twice a second until it holds it, or until told to stop. A try that
/// cannot reach the store's database is logged and tried again: a standby outlives an outage.
private final class LockWaiter: Service {
    let store: RealmStore
    let adapter: String
    let logger: Logger
    let lock = Mutex<DaemonLock?>(nil)
    static let interval = Duration.milliseconds(500)
    static let retry = Duration.seconds(2)

    init(store: RealmStore, adapter: String, logger: Logger) {
        (self.store, self.adapter, self.logger) = (store, adapter, logger)
    }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    do {
                        let held = try DaemonLock(store: self.store, adapter: self.adapter)
                        self.lock.withLock { $0 = held }
                        self.logger.notice("Taking over: the daemon that ran this adapter stopped")
                        return
                    } catch let e as RealmAdapterError where e.code == .invalidState {
                        try await Task.sleep(for: Self.interval)
                    } catch {
                        self.logger.warning(
                            "Standing by: cannot reach the store's database to try the daemon lock; trying again",
                            metadata: ["error": "\(error)"])
                        try await Task.sleep(for: Self.retry)
                    }
                }
            }
        } catch is CancellationError {
            return
        }
    }
}
