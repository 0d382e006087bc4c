import GraphQL
import RealmAdapter
import Synchronization

/// The GraphQL schema of each Realm, made again when the Realm's schema changes (compared at
/// each request: one read of the schema).
final class GraphQLSchemaCache: Sendable {
    struct Entry: Sendable {
        let schema: Schema
        let graphQL: GraphQLSchema
        /// How ``DirectQuery`` answers plain queries of this schema.
        let plan: DirectQuery.Plan
        /// Requests GraphQL's validation accepted against this schema (apps send the same few
        /// again and again; validating one costs about as much as answering it).
        let valid = ValidRequests()

        /// GraphQL's validation errors for `document`, whose text is `text`: none for a text
        /// this schema accepted before.
        func problems(_ document: Document, text: String) -> [GraphQLError] {
            if valid.contains(text) { return [] }
            let problems = validate(schema: graphQL, ast: document)
            if problems.isEmpty { valid.insert(text) }
            return problems
        }
    }

    /// A bounded set of request texts known to be valid.
    final class ValidRequests: Sendable {
        private let texts = Mutex<Set<String>>([])
        static let limit = 1_000

        func contains(_ text: String) -> Bool { texts.withLock { $0.contains(text) } }

        func insert(_ text: String) {
            texts.withLock {
                if $0.count >= Self.limit { $0.removeAll() }
                $0.insert(text)
            }
        }
    }
    private let entries = Mutex<[String: Entry]>([:])
    /// `server.presentIntsAsFloatsInSchema`.
    let intsAsFloats: Bool

    init(intsAsFloats: Bool) { self.intsAsFloats = intsAsFloats }

    func schema(of path: String, in store: RealmStore) throws -> Entry {
        guard try store.contains(path) else { throw ServerError.noRealm(path) }
        let schema = try store.schema(of: path)
        if let e = entries.withLock({ $0[path] }), e.schema == schema { return e }
        let (graphQL, plan) = try RealmGraphQLSchema.make(schema, intsAsFloats: intsAsFloats)
        let e = Entry(schema: schema, graphQL: graphQL, plan: plan)
        entries.withLock { $0[path] = e }
        return e
    }
}
