import Foundation
import GraphQL
import HummingbirdWebSocket
import Logging
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
    let logger: Logger

    static let protocols = ["graphql-transport-ws", "graphql-ws"]

    /// The subscriptions of the connection, by id, with the last result sent.
    actor Subscriptions {
        var active: [String: (query: String, variables: [String: Map], operation: String?, last: Data?)] = [:]

        func add(_ id: String, _ query: String, _ variables: [String: Map], _ operation: String?) -> Bool {
            guard active[id] == nil else { return false }
            active[id] = (query, variables, operation, nil)
            ServerMetrics.subscriptions.increment()
            return true
        }

        func remove(_ id: String) {
            if active.removeValue(forKey: id) != nil { ServerMetrics.subscriptions.decrement() }
        }

        /// The connection ended: its subscriptions with it.
        func removeAll() {
            ServerMetrics.subscriptions.decrement(by: Double(active.count))
            active = [:]
        }

        /// Records `result` for `id`; whether it differs from what was sent last.
        func changed(_ id: String, _ result: Data) -> Bool {
            guard var s = active[id], s.last != result else { return false }
            s.last = result
            active[id] = s
            return true
        }

        var ids: [String] { Array(active.keys) }
        func subscription(_ id: String) -> (query: String, variables: [String: Map], operation: String?)? {
            active[id].map { ($0.query, $0.variables, $0.operation) }
        }
    }

    func run(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async throws {
        var messages = inbound.messages(maxSize: RealmHTTPServer.maxBody).makeAsyncIterator()
        // The first message authenticates the connection.
        guard case .text(let first)? = try await messages.next(), let hello = try? JSONValue(parsing: Data(first.utf8)),
            hello["type"] == .string("connection_init")
        else {
            return try await outbound.close(.init(codeNumber: 4400), reason: "the first message is connection_init")
        }
        let token = ["Authorization", "authorization", "token", "authToken"].lazy.compactMap {
            if case .string(let s)? = hello["payload"]?[$0] { s } else { nil }
        }.first
        let context: GraphQLContext
        do {
            let user = try await server.authorize(header: token, path: path, need: .read)
            let realm = try server.schemas.schema(of: path, in: server.store)
            context = GraphQLContext(
                store: server.store, path: path, schema: realm.schema,
                origin: user.map { "user:\($0.id)" } ?? "graphql", budget: ObjectBudget())
        } catch let e as ServerError {
            return try await outbound.close(.init(codeNumber: e.status == 403 ? 4403 : 4401), reason: e.message)
        }
        try await send(outbound, ["type": .string("connection_ack")])
        let subscriptions = Subscriptions()
        ServerMetrics.connections.increment()
        defer { ServerMetrics.connections.decrement() }
        let changes = server.store.changes()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            // Each committed transaction of the Realm: every subscription again, sent if it changed.
            tasks.addTask {
                for await change in changes where change.path == path {
                    for id in await subscriptions.ids {
                        try await answer(id, subscriptions, context, outbound, version: change.version)
                    }
                }
            }
            if legacy {
                tasks.addTask {
                    while !Task.isCancelled {
                        try await send(outbound, ["type": .string("ka")])
                        try await Task.sleep(for: .seconds(10))
                    }
                }
            }
            defer { tasks.cancelAll() }
            defer { Task { await subscriptions.removeAll() } }
            while let message = try await messages.next() {
                guard case .text(let text) = message, let m = try? JSONValue(parsing: Data(text.utf8)),
                    case .string(let type)? = m["type"]
                else {
                    return try await outbound.close(
                        .init(codeNumber: 4400), reason: "messages are JSON objects with a type")
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
                    if case .object(let vars)? = payload.first(where: { $0.key == "variables" })?.value {
                        for v in vars { variables[v.key] = GraphQLValues.map(v.value) }
                    }
                    let operation = payload.first(where: { $0.key == "operationName" }).flatMap {
                        if case .string(let s) = $0.value { s } else { nil }
                    }
                    do {
                        let document = try parse(source: Source(body: query))
                        try GraphQLLimits.check(document)
                        guard
                            !document.definitions.contains(where: {
                                ($0 as? OperationDefinition)?.operation == .mutation
                            })
                        else {
                            try await error(outbound, id, "Mutations come through POST /graphql/\(path.dropFirst()).")
                            continue
                        }
                    } catch let e as GraphQLError {
                        try await error(outbound, id, e.message)
                        continue
                    }
                    guard await subscriptions.add(id, query, variables, operation) else {
                        return try await outbound.close(
                            .init(codeNumber: 4409), reason: "Subscriber for \(id) already exists")
                    }
                    try await answer(id, subscriptions, context, outbound)
                case "complete", "stop":
                    await subscriptions.remove(id)
                case "ping":
                    try await send(outbound, ["type": .string("pong")])
                case "pong":
                    continue
                case "connection_terminate":
                    return
                default:
                    return try await outbound.close(.init(codeNumber: 4400), reason: "unknown message type \(type)")
                }
            }
        }
    }

    /// Runs subscription `id` and sends its result if it differs from the last one sent.
    /// - Parameter version: the Realm's version a change notification gave (read when nil): a
    ///   thousand subscribers woken by one commit do not each read it.
    func answer(
        _ id: String, _ subscriptions: Subscriptions, _ context: GraphQLContext, _ outbound: WebSocketOutboundWriter,
        version: Int64? = nil
    ) async throws {
        guard let s = await subscriptions.subscription(id) else { return }
        let (store, path, server, origin) = (server.store, path, server, context.origin)
        let data = try await server.answers.answer(
            path: path, version: try version ?? store.version(of: path),
            request: SharedAnswers.key(s.query, s.variables, s.operation)
        ) {
            let realm = try server.schemas.schema(of: path, in: store)
            let fresh = GraphQLContext(
                store: store, path: path, schema: realm.schema, origin: origin, budget: ObjectBudget())
            if let document = try? parse(source: Source(body: s.query)),
                let data = DirectQuery.answer(
                    document, text: s.query, realm, variables: s.variables.mapValues(GraphQLValues.json),
                    operation: s.operation, context: fresh)
            {
                return data
            }
            let result =
                (try? await graphql(
                    schema: realm.graphQL, request: s.query, context: fresh, variableValues: s.variables,
                    operationName: s.operation)) ?? GraphQLResult(errors: [GraphQLError(message: "the query failed")])
            return try GraphQLResponse.json(result)
        }
        guard await subscriptions.changed(id, data) else { return }
        ServerMetrics.messages.increment()
        // The shared answer goes in as it is (one answer, many subscribers: not parsed again for each).
        var frame = JSONValue.object([.init("type", .string(legacy ? "data" : "next")), .init("id", .string(id))])
            .utf8()
        frame.removeLast()  // the closing brace, reopened for the payload
        frame.append(contentsOf: #","payload":"#.utf8)
        frame.append(contentsOf: data.last == UInt8(ascii: "\n") ? data.dropLast() : data[...])
        frame.append(UInt8(ascii: "}"))
        try await outbound.write(.text(String(decoding: frame, as: UTF8.self)))
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
