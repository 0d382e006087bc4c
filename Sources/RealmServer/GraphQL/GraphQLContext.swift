import RealmAdapter
import Synchronization

/// What a GraphQL request's resolvers work with: the Realm, and what its caller may do.
///
/// Resolvers read objects through ``objects(_:_:root:)``, ``page(_:_:)`` and
/// ``object(_:_:root:)``, which leave out what the caller's fine-grained permissions hide (the
/// store's SQL does the filtering), at every depth.
struct GraphQLContext: Sendable {
    let store: RealmStore
    let path: String
    /// The Realm's schema when the request began.
    let schema: Schema
    /// The origin of the Realm transactions its mutations make: the user's (`user:<id>`, or
    /// Studio's `studio:<id>`), so that `run` sends them to the database.
    let origin: String
    /// The objects this request may still read.
    let budget: ObjectBudget
    /// Who asks.
    let viewer: Viewer
    /// What the caller may do in the Realm (fine-grained permissions): read when first needed, or
    /// taken from a mutation's transaction (``GraphQLContext/known(_:)``).
    private let accessBox = AccessBox()
    /// The caller's level on the path (path permissions).
    let level: AccessLevel
    /// The server's users: a role's members and personal roles name users that exist.
    let users: UserDirectory?

    init(
        store: RealmStore, path: String, schema: Schema, viewer: Viewer, level: AccessLevel, budget: ObjectBudget,
        users: UserDirectory? = nil, origin: String? = nil
    ) throws {
        self.users = users
        self.store = store
        self.path = path
        self.schema = schema
        self.viewer = viewer
        self.level = level
        self.budget = budget
        self.origin = origin ?? viewer.id.map { "user:\($0)" } ?? "graphql"
    }

    /// What the caller may do in the Realm, read once per request.
    func access() throws -> RealmAccess {
        try accessBox.value.withLock { a in
            if let a { return a }
            let read = try viewer.access(to: path, in: store, schema: schema)
            a = read
            return read
        }
    }

    /// Keeps the access a mutation read in its transaction for the rest of the request (the
    /// objects it answers with), unless the request read it already.
    func known(_ access: RealmAccess) {
        accessBox.value.withLock { if $0 == nil { $0 = access } }
    }

    final class AccessBox: Sendable {
        let value = Mutex<RealmAccess?>(nil)
    }

    /// What a query of `type` needs: read, and query for a root field (a server-side query).
    private func canRead(_ type: String, root: Bool) throws -> Bool {
        try access().privileges(ofType: type).isSuperset(of: root ? [.read, .query] : .read)
    }

    /// `q`, narrowed to the objects the caller may read; nil when they may read none.
    func readable(_ type: String, _ q: ObjectQuery, root: Bool = false) throws -> ObjectQuery? {
        guard try canRead(type, root: root) else { return nil }
        var q = q
        let access = try access()
        if !access.isUnrestricted { q.visibleTo = access }
        return q
    }

    /// The objects of `type` that `q` selects and the caller may read.
    func objects(_ type: String, _ q: ObjectQuery, root: Bool = false) throws -> [RealmObject] {
        guard let q = try readable(type, q, root: root) else { return [] }
        return try GraphQLMutations.resolving { try store.objects(of: type, in: path, q) }
    }

    /// One page of the objects of `type` that `q` selects and the caller may read, and how many in all.
    func page(_ type: String, _ q: ObjectQuery) throws -> (objects: [RealmObject], count: Int) {
        guard let q = try readable(type, q) else { return ([], 0) }
        return try GraphQLMutations.resolving { try store.page(of: type, in: path, q) }
    }

    /// The object of `type` with `identity`, if there is one and the caller may read it.
    func object(_ type: String, _ identity: Value, root: Bool = false) throws -> RealmObject? {
        guard try canRead(type, root: root) else { return nil }
        return try store.object(of: type, identity: identity, in: path, readableBy: try access())
    }
}

/// Who makes a request: a user (an admin or not), or nobody when the server checks no tokens
/// (then, as an admin, nothing is hidden).
struct Viewer: Sendable, Hashable {
    let id: String?
    let isAdmin: Bool

    init(_ user: User?) {
        id = user?.id
        isAdmin = user?.isAdmin ?? true
    }

    init(id: String?, isAdmin: Bool) {
        self.id = id
        self.isAdmin = isAdmin
    }

    /// What the viewer may do in the Realm at `path` (unrestricted without metadata).
    func access(to path: String, in store: RealmStore, schema: Schema) throws -> RealmAccess {
        guard schema.hasPermissions, !isAdmin else { return .unrestricted }
        return try store.access(to: path, user: id, isAdmin: isAdmin)
    }

    /// What the viewer may do, as of this point in a write transaction.
    func access(in tx: WriteTransaction) throws -> RealmAccess { try tx.access(user: id, isAdmin: isAdmin) }
}
