import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import RealmAdapter
import ServiceLifecycle
import Synchronization

/// The HTTP endpoints of `run` and `events`: `/metrics`, `/health/live`, `/health/ready`.
public enum MetricsServer {
    /// The process's registry: swift-metrics is bootstrapped with it the first time it is used.
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    /// What the endpoints ask of the running command.
    public struct Probes: Sendable {
        /// Whether the store answers: checked before `ready`, and at each scrape (none while a
        /// load has not opened it).
        public var store: StoreHealth?
        /// Whether it is ready, and why (not).
        public var ready: @Sendable () async -> (ready: Bool, reason: String)
        /// Updates the gauges read at scrape time (lag, retained WAL); at most once a second.
        public var collect: @Sendable () async -> Void

        public init(
            store: RealmStore?, ready: @escaping @Sendable () async -> (ready: Bool, reason: String),
            collect: @escaping @Sendable () async -> Void = {}
        ) {
            self.store = store.map(StoreHealth.init)
            self.ready = ready
            self.collect = collect
        }
    }

    public static func service(host: String, port: Int, probes: Probes, logger: Logger) -> some Service {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            _ = await probes.store?.problem()
            await probes.collect()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("health/live") { _, _ -> Response in
            json(.ok, ["status": .string("live")])
        }
        router.get("health/ready") { _, _ -> Response in
            // A store that does not answer outranks what the command says.
            var (ready, reason) = await probes.ready()
            if let problem = await probes.store?.problem() { (ready, reason) = (false, problem) }
            return json(
                ready ? .ok : .serviceUnavailable,
                ["status": .string(ready ? "ready" : "not ready"), "reason": .string(reason)])
        }
        // The HTTP server's own messages (a cancelled connection at shutdown, at error level) are
        // not the daemon's news: only its failures, which surface as the error below.
        var quiet = logger
        quiet.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "realm-adapter"),
            logger: quiet)
        return Endpoint(app: app, host: host, port: port)
    }

    /// The server, whose failure to start (a port in use, an address not of this machine) says
    /// which port and option.
    struct Endpoint<S: Service>: Service {
        let app: S
        let host: String
        let port: Int

        func run() async throws {
            do {
                try await app.run()
            } catch let e where !(e is CancellationError) {
                throw MetricsServerError(
                    description: "Cannot serve /metrics on \(host):\(port) (--metrics-port, --metrics-host, "
                        + "server.metricsPort): \(e)")
            }
        }
    }

    /// The endpoint could not start; the message names the address and the options.
    public struct MetricsServerError: Error, CustomStringConvertible {
        public let description: String
    }

    static func json(_ status: HTTPResponse.Status, _ fields: KeyValuePairs<String, JSONValue>) -> Response {
        let body = JSONValue.object(fields.map { .init($0.key, $0.value) }).serialized() + "\n"
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// Values computed at scrape time, no more than once per `interval` (a scraper polling every
/// 100 ms must not run the lag queries ten times a second).
public final class ThrottledCollector: Sendable {
    private let last = Mutex<ContinuousClock.Instant?>(nil)
    let interval: Duration
    let body: @Sendable () async -> Void

    public init(every interval: Duration, _ body: @escaping @Sendable () async -> Void) {
        self.interval = interval
        self.body = body
    }

    public func collect() async {
        let due = last.withLock { last -> Bool in
            let now = ContinuousClock.now
            guard last.map({ now - $0 >= interval }) ?? true else { return false }
            last = now
            return true
        }
        if due { await body() }
    }
}
