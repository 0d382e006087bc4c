import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import RealmAdapter
import ServiceLifecycle
import Synchronization

/// `--metrics-port` and `--metrics-host`, for the long-running commands.
struct MetricsOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Serve /metrics (Prometheus text format), /health/live and /health/ready on this port "
                + "(default: server.metricsPort; without either, nothing is served).",
            valueName: "port"))
    var metricsPort: Int?

    @Option(
        help: ArgumentHelp(
            "The address the metrics port listens on (default: server.metricsHost, else 127.0.0.1; "
                + "0.0.0.0 for every interface).",
            valueName: "address"))
    var metricsHost: String?

    /// The port and address to serve on, if any; bootstraps the metrics first, so that every
    /// service made afterwards counts into them.
    func endpoint(_ c: Configuration) throws -> (host: String, port: Int)? {
        guard let port = metricsPort ?? c.metricsPort else { return nil }
        guard (1...65535).contains(port) else {
            throw ValidationError("--metrics-port must be between 1 and 65535, not \(port).")
        }
        _ = MetricsServer.registry
        return (metricsHost ?? c.metricsHost, port)
    }
}

/// The HTTP endpoints of `run` and `events`: `/metrics`, `/health/live`, `/health/ready`.
enum MetricsServer {
    /// The process's registry: swift-metrics is bootstrapped with it the first time it is used.
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    /// What the endpoints ask of the running command.
    struct Probes: Sendable {
        /// Whether it is ready, and why (not).
        var ready: @Sendable () async -> (ready: Bool, reason: String)
        /// Updates the gauges read at scrape time (lag, retained WAL); at most once a second.
        var collect: @Sendable () async -> Void = {}
    }

    static func service(host: String, port: Int, probes: Probes, logger: Logger) -> some Service {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            await probes.collect()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("health/live") { _, _ -> Response in
            json(.ok, ["status": .string("live")])
        }
        router.get("health/ready") { _, _ -> Response in
            let (ready, reason) = await probes.ready()
            return json(
                ready ? .ok : .serviceUnavailable,
                ["status": .string(ready ? "ready" : "not ready"), "reason": .string(reason)])
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "realm-adapter"),
            logger: logger)
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
final class ThrottledCollector: Sendable {
    private let last = Mutex<ContinuousClock.Instant?>(nil)
    let interval: Duration
    let body: @Sendable () async -> Void

    init(every interval: Duration, _ body: @escaping @Sendable () async -> Void) {
        self.interval = interval
        self.body = body
    }

    func collect() async {
        let due = last.withLock { last -> Bool in
            let now = ContinuousClock.now
            guard last.map({ now - $0 >= interval }) ?? true else { return false }
            last = now
            return true
        }
        if due { await body() }
    }
}
