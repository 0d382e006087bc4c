import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer
import ServiceLifecycle

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Deliver change events to the configured webhooks, without syncing a database.",
        discussion: """
            Each webhook of events.webhooks gets, as a JSON POST, every transaction of the Realms \
            its pathRegex matches (only those that change its types, when it names some): per type \
            the inserted, modified (properties before and after) and deleted objects. Each request \
            carries an Idempotency-Key header (path@version, the same on every retry) and, with \
            secretEnv, an X-Realm-Adapter-Signature header (sha256=HMAC of the body).

            Delivery is at least once: a webhook's place in each Realm moves only after a 2xx \
            answer. Failures (no answer within timeoutSeconds, a refused connection, a non-2xx \
            answer, a redirect, which is never followed) are retried with events.retry's backoff, \
            holding back only that webhook's Realm; after events.retry.attempts the transaction \
            is set aside as a dead letter (`realm-adapter status` lists them) and the Realm goes on.

            A webhook starts, when first run, at each Realm's current version. `realm-adapter run` \
            delivers them too, beside the sync; use this command to deliver without a database. \
            SIGTERM or SIGINT (Ctrl-C) finishes the delivery in flight and exits.

            Example:
              realm-adapter events --config adapter.json
            """
    )

    @OptionGroup var options: ConfigOptions
    @OptionGroup var metrics: MetricsOptions

    func run() async throws {
        try await reportingErrors {
            let (c, logger) = try options.load()
            let endpoint = try metrics.endpoint(c)
            guard !c.events.webhooks.isEmpty else {
                throw RealmAdapterError(
                    .invalidConfiguration,
                    "events.webhooks is empty in \(options.config): there is nothing to deliver. "
                        + "docs/events.md shows a webhook.",
                    context: ["json.path": "events.webhooks"])
            }
            guard try StoreLocation(c.realm).exists(logger: logger) else {
                throw RealmAdapterError.noStore(c.realm.store, for: "events")
            }
            let store = try StoreLocation(c.realm).open(logger: logger)
            let handlers = try c.events.services(store: store, schema: c.schema, logger: logger)
            var services: [any Service] = handlers
            if let endpoint {
                let events = Gauges.events(handlers, logger: logger)
                let probes = MetricsServer.Probes(
                    store: store,
                    ready: { handlers.lazy.map(\.health.readiness).first { !$0.ready } ?? (true, "delivering") },
                    collect: ThrottledCollector(every: .seconds(1), events).collect)
                services.append(
                    MetricsServer.service(host: endpoint.host, port: endpoint.port, probes: probes, logger: logger))
            }
            logger.info(
                "Delivering change events",
                metadata: ["webhooks": "\(c.events.webhooks.map(\.displayURL).joined(separator: ", "))"])
            let group = ServiceGroup(
                configuration: .init(
                    services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            try await group.run()
        }
    }
}
