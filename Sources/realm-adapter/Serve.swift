import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the store's Realms over HTTP: users and tokens, and GraphQL queries and mutations.",
        discussion: """
            Listens on server.host:server.port (default 127.0.0.1:9080):
              POST /auth                   log in or sign up (provider password), or with your auth
                                           service's token (provider jwt, with server.jwt), for a
                                           refresh token; exchange it (provider realm, with a path)
                                           for an access token to one Realm
              POST|GET /graphql/<path>     GraphQL on the Realm at <path> (queries; mutations by POST)
              GET /graphql/schema/<path>   that Realm's GraphQL schema

            Requests carry a token in the Authorization header: an access token for the Realm's \
            path, or an admin's refresh token (`realm-adapter user token NAME`). What a user may do \
            is set by path permissions (`realm-adapter permission`): read allows queries, write \
            mutations too; a user manages the Realms under their own path (/~/… is /<user id>/…), \
            admins every Realm. Each mutation is one Realm transaction with the user's origin, so \
            `realm-adapter run` on the same store sends it to the database.

            Tokens are signed with the key in the environment variable server.signingKeyEnv \
            (default REALM_ADAPTER_SIGNING_KEY; at least 32 characters). \
            server.disableAuthentication serves without tokens, as an admin: development only. \
            server.tls (certificateFile, keyFile) serves HTTPS and WSS. --metrics-port serves \
            /metrics, /health/live and /health/ready on a port of their own. SIGTERM or SIGINT \
            (Ctrl-C) stops it. docs/server.md has the details and examples.

            Example:
              export REALM_ADAPTER_SIGNING_KEY=$(openssl rand -hex 32)
              realm-adapter user add --admin alice --config adapter.json
              realm-adapter serve --config adapter.json
            """
    )

    @OptionGroup var options: ConfigOptions
    @OptionGroup var metrics: MetricsOptions

    func run() async throws {
        try await reportingErrors {
            let (c, logger) = try options.load(needsSchema: false)
            let endpoint = try metrics.endpoint(c)
            let store = try StoreLocation(c.realm).open(logger: logger)
            var services = [try await Self.service(c, store: store, logger: logger)]
            if let endpoint {
                let probes = MetricsServer.Probes(store: store, ready: { (true, "serving") })
                services.append(
                    MetricsServer.service(host: endpoint.host, port: endpoint.port, probes: probes, logger: logger))
            }
            let group = ServiceGroup(
                configuration: .init(
                    services: services.map { .init(service: $0) },
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }
    }
}

extension Serve {
    /// The server over `store`, as `serve` and `run --serve` run it: its users, its tokens (the
    /// signing key from the environment) or none with authentication disabled (warned about).
    static func service(_ c: Configuration, store: RealmStore, logger: Logger) async throws -> any Service {
        let users = try StoreLocation(c.realm).userDirectory()
        let tokens: Tokens?
        if c.server.disableAuthentication {
            logger.warning(
                """
                Authentication is disabled (server.disableAuthentication): anyone who reaches the port can read \
                and change every Realm. For development only.
                """)
            tokens = nil
        } else {
            tokens = await Tokens(key: try c.server.signingKey(), configuration: c.server)
        }
        var external: ExternalTokens?
        if let jwt = c.server.jwt { external = try await ExternalTokens(jwt) }
        if c.server.allowNickname {
            logger.warning(
                """
                Provider nickname is on (server.allowNickname): anyone who reaches the port can log in as any \
                nickname user, admins included. For development only.
                """)
        }
        let providers =
            ["password"] + (external == nil ? [] : ["jwt"]) + (c.server.allowAnonymous ? ["anonymous"] : [])
            + (c.server.allowNickname ? ["nickname"] : [])
        let scheme = c.server.tls == nil ? "http" : "https"
        logger.info(
            "Serving the Realms",
            metadata: [
                "address": "\(scheme)://\(c.server.host):\(c.server.port)", "realm.store": "\(c.realm.store)",
                "providers": "\(providers.joined(separator: ","))", "email": "\(c.server.email == nil ? "off" : "on")",
            ])
        // Studio's Sync page: `status`'s report and `dead-letter`'s action, through a connector of its own.
        let sync = try c.database.map { _ in
            SyncAccess(configuration: c, connector: try Wiring.connector(c, logger: logger).2, logger: logger)
        }
        return try RealmHTTPServer(
            store: store, users: users, tokens: tokens, external: external, configuration: c.server, sync: sync
        )
        .service(logger: logger)
    }
}
