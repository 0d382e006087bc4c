import RealmAdapter

/// What a GraphQL request's resolvers work with: the Realm, and what its caller may do.
struct GraphQLContext: Sendable {
    let store: RealmStore
    let path: String
    /// The Realm's schema when the request began.
    let schema: Schema
    /// The origin of the Realm transactions its mutations make: the user's (`user:<id>`), so
    /// that `run` sends them to the database.
    let origin: String
    /// The objects this request may still read.
    let budget: ObjectBudget
}
