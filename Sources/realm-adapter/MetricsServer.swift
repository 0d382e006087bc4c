import ArgumentParser
import RealmAdapter
import RealmServer

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
