import Foundation
import GraphQL
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import RealmAdapter
import ServiceLifecycle

/// `realm-adapter serve`: the Realms of a store over HTTP.
/// - `POST /auth`: users log in (or register) and get tokens (``AuthEndpoint``).
/// - `POST`/`GET /graphql/<path>`: GraphQL queries and mutations on the Realm at `<path>`
///   (``RealmGraphQLSchema``), with an access token for it or an admin's refresh token.
/// - `GET /graphql/schema/<path>`: that Realm's GraphQL schema (SDL).
public struct RealmHTTPServer: Sendable {
    let store: RealmStore
    let users: UserDirectory
    /// Nil when authentication is disabled (every request acts as an admin).
    let tokens: Tokens?
    /// Provider `jwt` (`server.jwt`).
    let external: ExternalTokens?
    let configuration: RealmAdapter.ServerConfiguration
    let schemas: GraphQLSchemaCache
    /// What Studio's Sync page reads and does: nil without the configuration's database.
    let sync: SyncAccess?
    /// The recent log lines Studio's Logs page shows.
    let logs: RecentLogs
    /// The live GraphQL subscriptions.
    let hub: SubscriptionHub
    /// How many of them each user holds.
    let quota = SubscriptionQuota()
    /// Every password check, with the limit on wrong passwords.
    let passwords: PasswordCheck
    /// The largest request body accepted (1 MiB).
    static let maxBody = 1 << 20
    /// How long a connection may sit idle between requests, or in the middle of a request's body.
    static let idleTimeout: TimeAmount = .seconds(60)

    public init(
        store: RealmStore, users: UserDirectory, tokens: Tokens?, external: ExternalTokens? = nil,
        configuration: RealmAdapter.ServerConfiguration, sync: SyncAccess? = nil, logs: RecentLogs = .shared
    ) {
        self.sync = sync
        self.logs = logs
        self.store = store
        self.users = users
        self.tokens = tokens
        self.external = external
        self.configuration = configuration
        passwords = PasswordCheck(users: users, configuration: configuration)
        schemas = GraphQLSchemaCache(intsAsFloats: configuration.presentIntsAsFloatsInSchema)
        hub = SubscriptionHub(store: store, schemas: schemas)
    }

    /// The server, as a service that runs until its group shuts down. With `server.tls`, it
    /// speaks HTTPS and WSS only; a certificate or key that cannot be read is an error here.
    public func service(logger: Logger) throws -> some Service {
        let router = Router()
        router.add(middleware: MetricsMiddleware())
        let mail = try configuration.email.map { try AccountMail(users: users, configuration: $0, logger: logger) }
        let auth = AuthEndpoint(
            users: users, passwords: passwords, tokens: tokens, external: external, configuration: configuration,
            mail: mail)
        router.post("auth") { request, _ -> Response in
            await Self.answering { try await auth.answer(try await Self.body(request)) }
        }
        let permissions = PermissionsEndpoint(users: users, tokens: tokens, store: store)
        router.post("permissions") { request, _ -> Response in
            await Self.answering {
                try await permissions.grant(request.headers[.authorization], try await Self.body(request))
            }
        }
        router.get("permissions") { request, _ -> Response in
            await Self.answering {
                try await permissions.list(
                    request.headers[.authorization], Self.formParameters(request.uri.query ?? ""))
            }
        }
        addAccountRoutes(to: router, mail: mail, permissions: permissions)
        try Studio(server: self, logger: logger).addRoutes(to: router)
        router.get("graphql/schema/**") { request, context -> Response in
            await Self.answering {
                let path = try Self.path(context)
                _ = try await authorize(request, path: path, need: .read)
                let sdl = printSchema(schema: try schemas.schema(of: path, in: store).graphQL)
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: sdl + "\n")))
            }
        }
        router.post("graphql/**") { request, context -> Response in
            await Self.answering {
                let data = try await Self.body(request)
                let body: JSONValue
                do { body = try JSONValue(parsing: data) } catch let e as RealmAdapterError {
                    throw ServerError.bodyNotJSON(e.message)
                }
                return try await graphQL(request, path: try Self.path(context), body: body)
            }
        }
        router.get("graphql/**") { request, context -> Response in
            await Self.answering {
                var fields: [JSONValue.Member] = []
                let parameters = Self.formParameters(request.uri.query ?? "")
                for name in ["query", "operationName"] {
                    if let v = parameters[name] { fields.append(.init(name, .string(v))) }
                }
                if let v = parameters["variables"] {
                    fields.append(.init("variables", try Self.json(variables: v)))
                }
                return try await graphQL(request, path: try Self.path(context), body: .object(fields), readOnly: true)
            }
        }
        // GraphQL subscriptions: a WebSocket upgrade of /graphql/<path>, in either protocol.
        let upgrade:
            @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<
                WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
            > = { request, channel, logger in
                guard let raw = request.path?.split(separator: "?").first, raw.hasPrefix("/graphql/"),
                    let path = try? Self.path(raw.dropFirst("/graphql".count).split(separator: "/").map(String.init))
                else { return .dontUpgrade }
                let offered = (request.headerFields[.secWebSocketProtocol] ?? "").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard let chosen = SubscriptionSession.protocols.first(where: offered.contains) else {
                    return .dontUpgrade
                }
                let session = SubscriptionSession(
                    server: self, path: path, legacy: chosen == "graphql-ws", channel: channel, logger: logger)
                return .upgrade([.secWebSocketProtocol: chosen]) { inbound, outbound, _ in
                    try await session.run(inbound, outbound)
                }
            }
        // A frame may be as large as a POST's body (the default, 16 KiB, refused valid queries).
        // A connection has `server.requestHeaderTimeout` for its first request's header section,
        // then may sit idle for a minute between requests (neither was limited).
        let channel = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(additionalChannelHandlers: [CloseAfterRefusal()], idleTimeout: Self.idleTimeout),
            ws: .init(maxFrameSize: Self.maxBody))
        let headTimeout = TimeAmount(configuration.requestHeaderTimeout)
        let http = HTTPServerBuilder { responder in
            GuardedChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, configuration: channel, shouldUpgrade: upgrade),
                headTimeout: headTimeout)
        }
        let app = Application(
            router: router,
            server: try configuration.tls.map { try .tls(http, tlsConfiguration: try Self.tls($0)) } ?? http,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "realm-adapter"),
            logger: logger)
        return Serving(app: app, hub: hub, sync: sync)
    }

    /// The application, and the subscriptions' change stream, which ends with it.
    struct Serving: Service {
        let app: any Service
        let hub: SubscriptionHub
        let sync: SyncAccess?

        func run() async throws {
            defer { hub.stop() }
            do { try await app.run() } catch {
                await sync?.connector.shutdown()
                throw error
            }
            await sync?.connector.shutdown()
        }
    }

    /// The TLS settings of `server.tls`: its certificate chain and key, read from their PEM files.
    static func tls(_ files: ServerTLSConfiguration) throws -> TLSConfiguration {
        func read<T>(_ key: String, _ file: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch {
                throw RealmAdapterError(
                    .invalidConfiguration,
                    "server.tls.\(key): cannot read a PEM \(key == "keyFile" ? "private key" : "certificate") "
                        + "from '\(file)' (\(error)).")
            }
        }
        let chain = try read("certificateFile", files.certificateFile) {
            try NIOSSLCertificate.fromPEMFile(files.certificateFile)
        }
        let key = try read("keyFile", files.keyFile) { try NIOSSLPrivateKey(file: files.keyFile, format: .pem) }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12  // 1.0 and 1.1 are deprecated (RFC 8996)
        return tls
    }

    /// Runs one GraphQL request (`{query, variables, operationName}`) against the Realm at `path`.
    func graphQL(_ request: Request, path: String, body: JSONValue, readOnly: Bool = false) async throws -> Response {
        guard case .object(let members) = body,
            case .string(let query)? = members.first(where: { $0.key == "query" })?.value
        else {
            throw ServerError.badRequest("A GraphQL request is a JSON object with a query string (and variables).")
        }
        let operation = members.first(where: { $0.key == "operationName" }).flatMap {
            if case .string(let s) = $0.value { s } else { nil }
        }
        var variables: [String: Map] = [:]
        var json: [String: JSONValue] = [:]
        switch members.first(where: { $0.key == "variables" })?.value {
        case .object(let vars)?:
            for v in vars {
                variables[v.key] = GraphQLValues.map(v.value)
                json[v.key] = v.value
            }
        case nil, .null?: break
        default: throw ServerError.badRequest("variables is a JSON object of the operation's variables.")
        }
        // A request that does not parse, or asks too much, gets GraphQL's own error shape (with
        // where it went wrong) before anything runs.
        let document: Document
        do {
            document = try GraphQLLimits.parse(query)
        } catch let e as GraphQLError {
            return try Self.graphQLAnswer(GraphQLResult(errors: [e]), status: .badRequest)
        }
        // A mutation needs write access, and cannot come through GET.
        let isMutation = document.definitions.contains { ($0 as? OperationDefinition)?.operation == .mutation }
        if isMutation && readOnly {
            throw ServerError(405, "Mutations come through POST, not GET.")
        }
        let (user, level) = try await authorized(
            header: request.headers[.authorization], path: path, need: isMutation ? .write : .read)
        let realm = try schemas.schema(of: path, in: store)
        // Inputs of the wrong type, said with where they are, before anything runs.
        let problems =
            GraphQLInputCheck.literals(document, realm.graphQL)
            + GraphQLInputCheck.variables(document, operation: operation, json, realm.graphQL)
        if !problems.isEmpty { return try Self.graphQLAnswer(GraphQLResult(errors: problems)) }
        let context = try GraphQLContext(
            store: store, path: path, schema: realm.schema, viewer: Viewer(user), level: level, budget: ObjectBudget(),
            users: users)
        // Plain queries are answered directly, the rest (and every error) by GraphQL's executor.
        if !isMutation,
            let data = DirectQuery.answer(
                document, text: query, realm, variables: json, operation: operation, context: context)
        {
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        do {
            return try Self.graphQLAnswer(
                try await graphql(
                    schema: realm.graphQL, request: query, context: context, variableValues: variables,
                    operationName: operation))
        } catch let e as GraphQLError {
            return try Self.graphQLAnswer(GraphQLResult(errors: [e]), status: .badRequest)
        }
    }

    static func graphQLAnswer(_ result: GraphQLResult, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try GraphQLResponse.json(result))))
    }

    /// Checks the request's token for `need` on `path`; the user (nil when authentication is disabled).
    func authorize(_ request: Request, path: String, need: AccessLevel) async throws -> User? {
        try await authorize(header: request.headers[.authorization], path: path, need: need)
    }

    /// Checks a token (an `Authorization` header's value) for `need` on `path`.
    func authorize(header: String?, path: String, need: AccessLevel) async throws -> User? {
        try await authorized(header: header, path: path, need: need).user
    }

    /// Checks a token for `need` on `path`: the user (nil when authentication is disabled) and
    /// the level they have there.
    func authorized(header: String?, path: String, need: AccessLevel) async throws -> (
        user: User?, level: AccessLevel
    ) {
        guard let tokens else { return (nil, .manage) }
        guard let header else { throw ServerError.tokenMissing() }
        let claims = try await tokens.verify(Tokens.token(fromHeader: header))
        let user = try users.current(claims)
        let have: AccessLevel
        switch claims.kind {
        case "access":
            guard claims.path == path else { throw ServerError.tokenForOtherPath(claims.path ?? "?", path) }
            // What the token carries, as far as the user still has it.
            have = min(claims.level, try users.level(of: user, at: path))
        case "refresh" where user.isAdmin, "admin" where user.isAdmin:
            have = .manage
        default:
            throw ServerError.wrongToken(
                "an access token for \(path) (POST /auth with provider realm), not a refresh token")
        }
        guard have >= need else { throw ServerError.forbidden(path, need: need, have: have) }
        return (user, have)
    }

    /// The Realm path of a `/graphql/**` route, its segments percent-decoded (`/a%20b` is `/a b`).
    static func path(_ context: BasicRequestContext) throws -> String {
        try path(context.parameters.getCatchAll().map(String.init))
    }

    static func path(_ segments: [String]) throws -> String {
        let parts = segments.map { $0.removingPercentEncoding ?? $0 }
        let path = "/" + parts.joined(separator: "/")
        do { try RealmPath.validate(path) } catch { throw ServerError.badRequest("'\(path)' is not a Realm path.") }
        return path
    }

    /// A URL query's parameters as HTML forms encode them (`+` is a space), the last of each name.
    static func formParameters(_ query: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            out[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return out
    }

    /// The GET `variables` parameter as JSON; an error that says where it is not.
    static func json(variables: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: Data(variables.utf8))
        } catch let e as RealmAdapterError {
            throw ServerError.variablesNotJSON(e.message)
        }
    }

    /// A request body that must be a JSON object; otherwise a 400 that says what `shape` it takes.
    static func object(_ body: Data, _ shape: String) throws -> JSONValue {
        guard let json = try? JSONValue(parsing: body), case .object = json else { throw ServerError.badRequest(shape) }
        return json
    }

    static func body(_ request: Request) async throws -> Data {
        do {
            return Data(buffer: try await request.body.collect(upTo: maxBody))
        } catch {
            throw ServerError.bodyTooLarge(maxBody)
        }
    }

    /// The answer of `body`, or its error as `{"error": message}` with its status.
    static func answering(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let e as ServerError {
            return Self.error(e.status, e.message)
        } catch let e as RealmAdapterError {
            let status =
                switch e.code {
                case .realmNotFound: 404
                case .invalidValue, .invalidPath, .schemaViolation, .duplicatePrimaryKey, .invalidSchema,
                    .invalidInstruction:
                    400
                default: 500
                }
            return Self.error(status, e.message)
        } catch let e as GraphQLError {
            return Self.error(400, e.message)
        } catch {
            return Self.error(500, "\(error)")
        }
    }

    static func error(_ status: Int, _ message: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        // A body too large is not read further: the connection closes after the answer (CloseAfterRefusal).
        if status == 413 { headers[.connection] = "close" }
        return Response(
            status: .init(code: status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: errorBody(message))))
    }

    /// An error's JSON body, `{"error": message}`.
    static func errorBody(_ message: String) -> String {
        JSONValue.object([.init("error", .string(message))]).serialized() + "\n"
    }
}
