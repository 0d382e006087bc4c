import Foundation
import GraphQL
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import RealmAdapter

/// One WebSocket connection to `/graphql/<path>`: GraphQL subscriptions on one Realm.
///
/// It speaks `graphql-transport-ws` (today's clients: `connection_init`, `subscribe`, `next`,
/// `complete`, `ping`) and the legacy `graphql-ws` of subscriptions-transport-ws (`start`,
/// `data`, `stop`, `ka`), chosen by the WebSocket subprotocol. The first message,
/// `connection_init`, carries the token (`{"Authorization": …}` or the legacy `{"token": …}`),
/// checked for read access to the path. Each subscription's result is sent when it starts and
/// again after each committed transaction of the Realm that changes it, from any process
/// (`run` bringing a database change, a mutation, the CLI).
struct SubscriptionSession: Sendable {
    let server: RealmHTTPServer
    let path: String
    /// The legacy protocol (`graphql-ws`) rather than `graphql-transport-ws`.
    let legacy: Bool
    /// The connection, to which subscriptions' answers are written (``SubscriptionMember``).
    let channel: any Channel
    let logger: Logger

    static let protocols = ["graphql-transport-ws", "graphql-ws"]

    /// How long a connection has for its `connection_init` (graphql-ws, the protocol's reference
    /// server, closes with 4408 after 3 seconds).
    static let initialisationTimeout = Duration.seconds(3)
    /// Subscriptions one connection may hold (each distinct one runs after every commit).
    static let maxSubscriptions = 100
    /// How often an open connection's token is checked again.
    static let recheckInterval = Duration.seconds(2)

    func run(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async throws {
        var messages = inbound.messages(maxSize: RealmHTTPServer.maxBody).makeAsyncIterator()
        // The first message authenticates the connection; a client that says nothing is let go.
        let timeout = Task {
            try await Task.sleep(for: Self.initialisationTimeout)
            try await close(outbound, 4408, "Connection initialisation timeout")
        }
        let firstMessage = try await messages.next()
        timeout.cancel()
        guard let firstMessage else { return }  // closed, by the client or at the timeout
        guard case .text(let first) = firstMessage, let hello = try? JSONValue(parsing: Data(first.utf8)),
            hello["type"] == .string("connection_init")
        else {
            return try await close(outbound, 4400, "the first message is connection_init")
        }
        let token = ["Authorization", "authorization", "token", "authToken"].lazy.compactMap {
            if case .string(let s)? = hello["payload"]?[$0] { s } else { nil }
        }.first
        // Whose subscriptions these are, for the quota (everyone's, with authentication disabled).
        let owner: String
        let viewer: Viewer
        do {
            let user = try await server.authorize(header: token, path: path, need: .read)
            owner = user?.id ?? ""
            viewer = Viewer(user)
            _ = try server.schemas.schema(of: path, in: server.store)
        } catch let e as ServerError {
            return try await refuse(outbound, e)
        }
        // Where subscriptions' answers are written (SubscriptionMember).
        let outbox = try await SubscriptionOutbox.install(on: channel)
        try await send(outbound, ["type": .string("connection_ack")])
        ServerMetrics.connections.increment()
        defer { ServerMetrics.connections.decrement() }
        // The subscriptions of the connection, by id (touched by this task only).
        var active: [String: SubscriptionMember] = [:]
        defer {
            server.quota.give(owner, active.count)
            server.hub.remove(active.values)
            ServerMetrics.subscriptions.decrement(by: Double(active.count))
        }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            if legacy {
                tasks.addTask {
                    while !Task.isCancelled {
                        try await send(outbound, ["type": .string("ka")])
                        try await Task.sleep(for: .seconds(10))
                    }
                }
            }
            // The access the connection was opened with is checked again as it lasts: a revoked
            // grant, a changed password or an expired token ends it, as they end the token's
            // HTTP requests.
            tasks.addTask {
                repeat {
                    try await Task.sleep(for: Self.recheckInterval)
                } while try await admitted(token, outbound)
            }
            defer { tasks.cancelAll() }
            while let message = try await messages.next() {
                guard case .text(let text) = message, let m = try? JSONValue(parsing: Data(text.utf8)),
                    case .string(let type)? = m["type"]
                else {
                    return try await close(outbound, 4400, "messages are JSON objects with a type")
                }
                let id = if case .string(let s)? = m["id"] { s } else { "" }
                switch type {
                case "subscribe", "start":
                    guard case .object(let payload)? = m["payload"],
                        case .string(let query)? = payload.first(where: { $0.key == "query" })?.value
                    else {
                        try await error(outbound, id, "A subscription's payload has a query.")
                        continue
                    }
                    var variables: [String: Map] = [:]
                    var json: [String: JSONValue] = [:]
                    if case .object(let vars)? = payload.first(where: { $0.key == "variables" })?.value {
                        for v in vars {
                            variables[v.key] = GraphQLValues.map(v.value)
                            json[v.key] = v.value
                        }
                    }
                    let operation = payload.first(where: { $0.key == "operationName" }).flatMap {
                        if case .string(let s) = $0.value { s } else { nil }
                    }
                    do {
                        let document = try GraphQLLimits.parse(query)
                        guard
                            !document.definitions.contains(where: {
                                ($0 as? OperationDefinition)?.operation == .mutation
                            })
                        else {
                            try await error(outbound, id, "Mutations come through POST /graphql/\(path.dropFirst()).")
                            continue
                        }
                        // One that does not validate gets an error, and is not kept.
                        let realm = try? server.schemas.schema(of: path, in: server.store)
                        var problems = realm?.problems(document, text: query) ?? []
                        if let realm, problems.isEmpty {
                            problems =
                                GraphQLInputCheck.literals(document, realm.graphQL)
                                + GraphQLInputCheck.variables(document, operation: operation, json, realm.graphQL)
                        }
                        guard problems.isEmpty else {
                            try await error(outbound, id, problems.map(\.message).joined(separator: " "))
                            continue
                        }
                    } catch let e as GraphQLError {
                        try await error(outbound, id, e.message)
                        continue
                    }
                    guard active[id] == nil else {
                        return try await close(outbound, 4409, "Subscriber for \(id) already exists")
                    }
                    guard active.count < Self.maxSubscriptions else {
                        try await error(
                            outbound, id,
                            "A connection holds at most \(Self.maxSubscriptions) subscriptions: complete one first.")
                        continue
                    }
                    guard try await admitted(token, outbound) else { return }
                    guard server.quota.take(owner) else {
                        try await error(
                            outbound, id,
                            "A user holds at most \(SubscriptionQuota.perUser) subscriptions, across connections: "
                                + "complete some first.")
                        continue
                    }
                    let member = SubscriptionMember(
                        id: id, path: path, request: .init(query: query, variables: variables, operation: operation),
                        legacy: legacy, viewer: viewer, outbox: outbox)
                    active[id] = member
                    ServerMetrics.subscriptions.increment()
                    try await server.hub.add(member)
                case "complete", "stop":
                    if let member = active.removeValue(forKey: id) {
                        server.quota.give(owner)
                        server.hub.remove([member])
                        ServerMetrics.subscriptions.decrement()
                    }
                case "ping":
                    try await send(outbound, ["type": .string("pong")])
                case "pong":
                    continue
                case "connection_init":
                    return try await close(outbound, 4429, "Too many initialisation requests")
                case "connection_terminate":
                    return
                default:
                    return try await close(outbound, 4400, "unknown message type \(type)")
                }
            }
        }
    }

    /// Closes the connection with `code` and `reason`, the reason cut to the 123 bytes a close
    /// frame has room for (RFC 6455: 125 bytes, 2 of them the code; a longer one is a protocol
    /// error to clients, which then lose the code and the reason).
    func close(_ outbound: WebSocketOutboundWriter, _ code: Int, _ reason: String) async throws {
        var bytes = 0
        let cut = reason.prefix {
            bytes += $0.utf8.count
            return bytes <= 123
        }
        try await outbound.close(.init(codeNumber: code), reason: String(cut))
    }

    /// Closes the connection for a token refused (4401) or without the access needed (4403).
    func refuse(_ outbound: WebSocketOutboundWriter, _ e: ServerError) async throws {
        try await close(outbound, e.status == 403 ? 4403 : 4401, e.message)
    }

    /// Whether `token` still gives read access to the path; if not, the connection is closed
    /// saying why (``refuse(_:_:)``).
    func admitted(_ token: String?, _ outbound: WebSocketOutboundWriter) async throws -> Bool {
        do {
            _ = try await server.authorize(header: token, path: path, need: .read)
            return true
        } catch let e as ServerError {
            try await refuse(outbound, e)
            return false
        }
    }

    func error(_ outbound: WebSocketOutboundWriter, _ id: String, _ message: String) async throws {
        let errors = JSONValue.array([.object([.init("message", .string(message))])])
        try await send(
            outbound,
            [
                "type": .string("error"), "id": .string(id),
                "payload": legacy ? .object([.init("errors", errors)]) : errors,
            ])
    }

    func send(_ outbound: WebSocketOutboundWriter, _ members: KeyValuePairs<String, JSONValue>) async throws {
        try await outbound.write(.text(JSONValue.object(members.map { .init($0.key, $0.value) }).serialized()))
    }
}
