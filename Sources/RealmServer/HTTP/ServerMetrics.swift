import Metrics

/// What `serve` counts, besides Hummingbird's own request metrics (`hb_requests`,
/// `http_server_request_duration` and `http_server_active_requests`, by route, method and status).
/// Served at `/metrics` with `--metrics-port` (or `server.metricsPort`).
enum ServerMetrics {
    /// Open WebSocket connections (subscriptions' carriers).
    static let connections = Meter(label: "realm_adapter_graphql_connections")
    /// Active subscriptions, over every connection.
    static let subscriptions = Meter(label: "realm_adapter_graphql_subscriptions")
    /// Results sent to subscribers (one per subscription and change of its answer).
    static let messages = Counter(label: "realm_adapter_graphql_subscription_messages_total")
    /// Results never sent, because a newer one replaced them while the subscriber's connection
    /// took no more (a client reading slowly, or not at all).
    static let superseded = Counter(label: "realm_adapter_graphql_subscription_messages_superseded_total")

    /// A login at `POST /auth` (providers `password` and `jwt`), and whether it succeeded.
    static func login(_ provider: String, succeeded: Bool) {
        Counter(
            label: "realm_adapter_logins_total",
            dimensions: [("provider", provider), ("result", succeeded ? "ok" : "refused")]
        ).increment()
    }
}
