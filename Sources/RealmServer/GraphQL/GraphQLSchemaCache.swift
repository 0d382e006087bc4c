import GraphQL
import RealmAdapter
import Synchronization

/// The GraphQL schema of each Realm, made again when the Realm's schema changes (compared at
/// each request: one read of the schema).
final class GraphQLSchemaCache: Sendable {
    struct Entry: Sendable {
        let schema: Schema
        let graphQL: GraphQLSchema
    }
    private let entries = Mutex<[String: Entry]>([:])
    /// `server.presentIntsAsFloatsInSchema`.
    let intsAsFloats: Bool

    init(intsAsFloats: Bool) { self.intsAsFloats = intsAsFloats }

    func schema(of path: String, in store: RealmStore) throws -> Entry {
        guard try store.contains(path) else { throw ServerError.noRealm(path) }
        let schema = try store.schema(of: path)
        if let e = entries.withLock({ $0[path] }), e.schema == schema { return e }
        let e = Entry(schema: schema, graphQL: try RealmGraphQLSchema.make(schema, intsAsFloats: intsAsFloats))
        entries.withLock { $0[path] = e }
        return e
    }
}
