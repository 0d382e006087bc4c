import Foundation
import GraphQL
import NIOCore
import RealmAdapter
import Synchronization

/// Every live subscription of the server, grouped by Realm and by request.
///
/// One stream of the store's changes serves them all. After each committed transaction of a
/// Realm, each distinct request on it runs once, and its answer is offered to every subscriber
/// of that request (``SubscriptionMember/offer(_:version:frames:)``), who sends it on if it differs
/// from what it sent last. So a thousand clients of one app, subscribed to one query, cost one
/// run of it per commit and, per client, only the message: no task wakes for a client whose
/// answer did not change, and none hops between actors.
final class SubscriptionHub: Sendable {
    /// A subscription's request: what makes two subscriptions ask the same.
    struct Request: Sendable {
        let query: String
        let variables: [String: Map]
        let operation: String?
        /// Its identity: text, variables (by name) and operation.
        var key: String {
            query + "\u{0}"
                + variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{0}")
                + "\u{0}" + (operation ?? "")
        }
    }

    /// The subscribers of one request on one Realm, by their connections' event loop (each
    /// answer takes one hop to each loop, for all its subscribers there).
    private struct Group {
        let request: Request
        var loops: [ObjectIdentifier: Loop] = [:]

        struct Loop {
            let loop: any EventLoop
            var members: [ObjectIdentifier: SubscriptionMember] = [:]
        }

        /// The group's members by viewer, each as a group of its own: in a Realm with
        /// fine-grained permissions, each viewer's answer is their own.
        func byViewer() -> [Viewer: Group] {
            var out: [Viewer: Group] = [:]
            for (_, loop) in loops {
                for (_, m) in loop.members { out[m.viewer, default: Group(request: request)].add(m) }
            }
            return out
        }

        mutating func add(_ m: SubscriptionMember) {
            let loop = m.eventLoop
            loops[ObjectIdentifier(loop), default: Loop(loop: loop)].members[ObjectIdentifier(m)] = m
        }

        /// Removes `m`; whether the group is empty now.
        mutating func remove(_ m: SubscriptionMember) -> Bool {
            let loop = ObjectIdentifier(m.eventLoop)
            loops[loop]?.members[ObjectIdentifier(m)] = nil
            if loops[loop]?.members.isEmpty == true { loops[loop] = nil }
            return loops.isEmpty
        }
    }

    private struct State {
        /// Per path, per request key.
        var groups: [String: [String: Group]] = [:]
        /// Following the store's changes, from the first subscription until ``stop()``.
        var following: Task<Void, Never>?
        var stopped = false
    }

    private let store: RealmStore
    private let schemas: GraphQLSchemaCache
    private let state = Mutex(State())
    /// First answers, shared by subscriptions that start together on one version.
    private let firstAnswers = SharedAnswers()

    init(store: RealmStore, schemas: GraphQLSchemaCache) {
        self.store = store
        self.schemas = schemas
    }

    /// Adds a subscription and sends its first answer. Every commit of the Realm from the moment
    /// it is added is offered to it, so none falls between the first answer and the next.
    func add(_ member: SubscriptionMember) async throws {
        // The store's change stream starts with the first subscription, in the lock, before its
        // first answer is read: no commit falls between a subscription's first answer and the next.
        state.withLock { s in
            if s.following == nil, !s.stopped {
                let changes = store.changes()
                s.following = Task { [weak self] in
                    // The version of each Realm the last answers were read at: they were read as
                    // it was then, so changes that queued up meanwhile are covered, and a backlog
                    // is answered once, not change by change.
                    var answered: [String: Int64] = [:]
                    for await change in changes where change.version > answered[change.path] ?? -1 {
                        guard let self else { return }
                        answered[change.path] = await self.deliver(change)
                    }
                }
            }
            s.groups[member.path, default: [:]][member.key, default: Group(request: member.request)].add(member)
        }
        let version = try store.version(of: member.path)
        let personal = try schemas.schema(of: member.path, in: store).schema.hasPermissions
        let key = personal ? member.key + "\u{0}" + Self.key(member.viewer) : member.key
        let data = try await firstAnswers.answer(path: member.path, version: version, request: key) {
            try await self.answer(member.request, path: member.path, viewer: member.viewer)
        }
        var one = Group(request: member.request)
        one.add(member)
        Self.offer(data, version: version, to: one)
    }

    /// Removes subscriptions (a `complete`, or their connection ended).
    func remove(_ members: some Sequence<SubscriptionMember>) {
        state.withLock { s in
            for m in members {
                m.end()
                if s.groups[m.path]?[m.key]?.remove(m) == true { s.groups[m.path]?[m.key] = nil }
                if s.groups[m.path]?.isEmpty == true { s.groups[m.path] = nil }
            }
        }
    }

    /// Stops following the store (the server stopped).
    func stop() {
        state.withLock { s in
            s.stopped = true
            s.following?.cancel()
            s.following = nil
        }
    }

    /// Offers each request on the changed Realm its new answer, one run per request, read as the
    /// Realm is now; the version they were read at (at least the change's).
    private func deliver(_ change: RealmChange) async -> Int64 {
        let version = max(change.version, (try? store.version(of: change.path)) ?? change.version)
        let groups = state.withLock { Array(($0.groups[change.path] ?? [:]).values) }
        // In a Realm with fine-grained permissions, each subscriber's answer is read as they may
        // see it (a change of permissions re-answers them too); otherwise one answer serves all.
        let personal = (try? schemas.schema(of: change.path, in: store).schema.hasPermissions) ?? true
        for group in groups {
            if personal {
                for (viewer, own) in group.byViewer() {
                    guard let data = try? await answer(group.request, path: change.path, viewer: viewer) else {
                        continue
                    }
                    Self.offer(data, version: version, to: own)
                }
                continue
            }
            guard let data = try? await answer(group.request, path: change.path, viewer: Viewer(nil)) else {
                continue
            }
            Self.offer(data, version: version, to: group)
        }
        return version
    }

    /// A viewer as part of a shared answer's key.
    static func key(_ viewer: Viewer) -> String { (viewer.isAdmin ? "admin:" : "user:") + (viewer.id ?? "") }

    /// Offers `data` to the members of `group`, on their connections' event loops: one hop to
    /// each loop for all its members, where each writes to its socket directly.
    private static func offer(_ data: Data, version: Int64, to group: Group) {
        for (_, loop) in group.loops {
            loop.loop.execute {
                var frames: [String: ByteBuffer] = [:]
                var sent = 0
                for (_, member) in loop.members where member.offer(data, version: version, frames: &frames) {
                    sent += 1
                }
                ServerMetrics.messages.increment(by: sent)
            }
        }
    }

    /// The answer to `request` on the Realm at `path` as it is now: a GraphQL response.
    func answer(_ request: Request, path: String, viewer: Viewer) async throws -> Data {
        let realm = try schemas.schema(of: path, in: store)
        // Subscriptions only read: their level is what reading needs.
        let context = try GraphQLContext(
            store: store, path: path, schema: realm.schema, viewer: viewer, level: .read, budget: ObjectBudget())
        if let document = try? parse(source: Source(body: request.query)),
            let data = DirectQuery.answer(
                document, text: request.query, realm, variables: request.variables.mapValues(GraphQLValues.json),
                operation: request.operation, context: context)
        {
            return data
        }
        let result =
            (try? await graphql(
                schema: realm.graphQL, request: request.query, context: context, variableValues: request.variables,
                operationName: request.operation)) ?? GraphQLResult(errors: [GraphQLError(message: "the query failed")])
        return try GraphQLResponse.json(result)
    }
}
