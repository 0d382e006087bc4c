import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer
import ServiceLifecycle

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the adapter daemon: keep the Realms and the database in sync, both ways.",
        discussion: """
            Database changes flow into the Realms (Postgres: logical replication; SQL Server: \
            change tracking, or triggers and a change log where there is none, as on Babelfish), \
            and Realm transactions flow into the database, each exactly once and never echoed back.

            On start it prepares the database: the state and dead-letter tables; for Postgres the \
            publication and the replication slot (created if missing; database.resetReplicationSlot \
            starts over), for SQL Server change tracking on the mapped tables or the capture \
            triggers; and with database.createSchema the mapped tables. It then checks that every \
            mapped table and column exists with a type that can hold its property, and stops \
            with a list of mismatches otherwise. With database.applyRealmSchemaChanges, types and \
            properties that apps add to the Realms become tables and columns, synced both ways.

            SIGTERM or SIGINT (Ctrl-C) finishes the transaction in flight, confirms it, and exits. \
            A lost connection is retried with database.retry's backoff and resumes without loss.

            Example:
              PGPASSWORD=… realm-adapter run --config adapter.json --log-level debug
            """
    )

    @OptionGroup var options: ConfigOptions
    @OptionGroup var metrics: MetricsOptions
    @Flag(
        help: """
            Also serve the Realms over HTTP in this process, as `realm-adapter serve` does (the server \
            section; the signing key from server.signingKeyEnv).
            """)
    var serve = false

    func run() async throws {
        try await reportingErrors {
            let (c, logger) = try options.load()
            let endpoint = try metrics.endpoint(c)
            let serve = self.serve
            let daemon = try await Daemon.start(c, logger: logger, endpoint: endpoint) { store in
                serve ? [try await Serve.service(c, store: store, logger: logger)] : []
            }
            // Nil: stopped while standing by for another daemon.
            try await daemon?.run()
        }
    }
}

/// The daemon's parts, wired from a configuration.
struct Daemon {
    let connector: any DatabaseConnector
    let group: ServiceGroup
    /// Held while the daemon runs (one daemon per adapter and store).
    var lock: DaemonLock?

    /// - Parameter extra: services that run beside the sync on its store (`run --serve`'s server).
    static func start(
        _ c: Configuration, logger: Logger, endpoint: (host: String, port: Int)? = nil,
        extra: (RealmStore) async throws -> [any Service] = { _ in [] }
    ) async throws -> Daemon? {
        let (database, mapping, connector) = try Wiring.connector(c, logger: logger)
        let location = StoreLocation(c.realm)
        let store = try location.open(logger: logger)
        guard
            let lock = try await Standby.lock(
                store: store, location: location, adapter: c.realm.adapterName, endpoint: endpoint, logger: logger)
        else {
            await connector.shutdown()
            return nil
        }
        logger.info(
            "Preparing the database",
            metadata: ["db.target": "\(database.displayTarget)", "db.source": "\(connector.sourceName)"])
        // Retried while the database is unreachable (it may still be starting).
        let start = try await withRetries(database.retry, connector: connector, logger: logger, what: "start") {
            try await connector.prepare(mapping)
        }
        do {
            var daemon = try assemble(
                c, store: store, connector: connector, mapping: mapping, start: start, endpoint: endpoint,
                extra: try await extra(store), logger: logger)
            daemon.lock = lock
            return daemon
        } catch {
            _ = await connector.abandonUnusedStart()
            await connector.shutdown()
            throw error
        }
    }

    /// The services of a daemon whose database is prepared.
    static func assemble(
        _ c: Configuration, store: RealmStore, connector: any DatabaseConnector, mapping: Mapping,
        start: StreamStart, endpoint: (host: String, port: Int)? = nil, extra: [any Service] = [], logger: Logger
    ) throws -> Daemon {
        let database = c.database!
        if start == .restarted {
            logger.warning(
                "Started the change stream over, as configured: changes made while no daemon ran are not in the Realms",
                metadata: ["db.source": "\(connector.sourceName)"])
        }
        try DatabaseToRealmService.requireStoreFollows(store, source: connector.sourceName, start: start)
        let adapter = try Adapter(
            store: store, name: c.realm.adapterName, pathRegex: c.realm.effectivePathRegex, logger: logger)
        // One mapping for both directions: it grows when Realm schema changes are applied.
        let mappings = SharedMapping(mapping)
        let applier = RealmApplier(
            store: store, mappings: mappings, origin: adapter.origin, source: connector.sourceName)
        // Webhooks first: they register before the sync writes anything, so they see all of it.
        let webhooks = try c.events.services(store: store, schema: c.schema, logger: logger)
        let databaseToRealm = try DatabaseToRealmService(
            connector: connector, applier: applier, adapter: adapter, retry: database.retry,
            ignoreSQLErrors: c.ignoreSQLErrors, logger: logger)
        let realmToDatabase = RealmToDatabaseService(
            connector: connector, adapter: adapter, mappings: mappings, retry: database.retry,
            ignoreSQLErrors: c.ignoreSQLErrors, applyRealmSchemaChanges: database.applyRealmSchemaChanges,
            logger: logger)
        var services: [any Service] = webhooks + [databaseToRealm, realmToDatabase] + extra
        if let endpoint {
            let probes = MetricsServer.Probes(
                store: store,
                ready: {
                    // A refused transaction stops the daemon: it outranks the stream's state.
                    if let refused = realmToDatabase.health.blockedReason { return (false, refused) }
                    let stream = databaseToRealm.health.readiness
                    guard stream.ready else { return stream }
                    return webhooks.lazy.map(\.health.readiness).first { !$0.ready } ?? stream
                },
                collect: Gauges.daemon(adapter: adapter, connector: connector, webhooks: webhooks, logger: logger))
            services.append(
                MetricsServer.service(host: endpoint.host, port: endpoint.port, probes: probes, logger: logger))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        // "Syncing" is said by the database → Realm service once its stream runs: by then the
        // group handles SIGTERM (said here, a SIGTERM right after it would kill the process).
        return Daemon(connector: connector, group: group)
    }

    func run() async throws {
        defer { withExtendedLifetime(lock) {} }
        do {
            try await group.run()
        } catch {
            _ = await connector.abandonUnusedStart()
            await connector.shutdown()
            throw error
        }
        await connector.shutdown()
    }
}

/// What the daemon and the loader build alike from a configuration.
enum Wiring {
    /// The database section, the mapping (every property supported) and the connector
    /// that `database.type` names.
    static func connector(_ c: Configuration, logger: Logger) throws
        -> (DatabaseConfiguration, Mapping, any DatabaseConnector)
    {
        let connector = try connectors.connector(c, logger: logger)
        return (c.database!, try Mapping(c), connector)
    }
}
