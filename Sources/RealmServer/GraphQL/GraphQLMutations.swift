import GraphQL
import RealmAdapter

/// The mutations of ``RealmGraphQLSchema``: each is one Realm transaction with the caller's origin.
enum GraphQLMutations {
    /// A policy of ``create(_:_:policy:acl:_:)`` GraphQL does not offer: change objects that exist,
    /// create none (Studio's edits: an object deleted since its page was read stays deleted).
    static let updateOnly = "UPDATE_ONLY"

    /// Creates or updates one object per input, as `policy` says, and returns them as stored.
    /// - Parameter acl: the ACL of each new object (`[{role, privileges}]`); undefined or null:
    ///   the creator's personal role gets what they hold of read, update, delete and setPermissions.
    static func create(_ t: ObjectSchema, _ inputs: [Map], policy: String?, acl: Map = .undefined, _ c: GraphQLContext)
        throws -> [RealmObject]
    {
        guard let pk = t.primaryKey else {
            throw GraphQLError(message: "\(t.name) has no primary key: its objects cannot be created through GraphQL.")
        }
        let policy = policy ?? "NONE"
        let (ids, _) = try resolving {
            try c.store.write(to: c.path, origin: c.origin) { tx -> [RealmAdapter.Value] in
                let access = try c.viewer.access(in: tx)
                c.known(access)
                var created: [RealmAdapter.Value] = []
                let ids = try inputs.map { input in
                    var values = try Self.values(t, input, c.schema)
                    guard let key = values[pk], !key.isNull else {
                        throw GraphQLError(message: "\(t.name)Input needs \(pk), the primary key.")
                    }
                    let exists = try tx.object(t.name, key) != nil
                    if !exists && policy == Self.updateOnly {
                        throw GraphQLError(message: "There is no \(t.name) with \(pk) \(key) any more: it was deleted.")
                    }
                    if exists && policy == "NONE" {
                        throw GraphQLError(
                            message:
                                "A \(t.name) with \(pk) \(key) exists already: updatePolicy MODIFIED or ALL updates it."
                        )
                    }
                    let k = try key.coercedKey(of: t.name, in: tx.schema)
                    if !exists {
                        try require([.update, .create], access.realm, "creating a \(t.name) in", .realm)
                        try require(.create, access.privileges(ofType: t.name), "creating a", .type(t.name))
                        created.append(k)
                    } else if !created.contains(k) {
                        // A creator may go on changing what it created in the same transaction.
                        try require(.update, t.name, k, access, tx, "updating")
                    }
                    if policy == "ALL" {
                        // Only what GraphQL shows: properties it cannot name (and ACLs) keep their values.
                        for p in t.properties
                        where p.type.isStored && RealmGraphQLSchema.isShown(p) && values[p.name] == nil {
                            if p.type.isList {
                                values.append(p.name, .list([]))
                            } else if p.isOptional {
                                values.append(p.name, .null)
                            }
                        }
                    }
                    if exists { try tx.upsert(t.name, key, values) } else { _ = try tx.create(t.name, values) }
                    return key
                }
                if tx.schema.aclProperty(of: t.name) != nil, !created.isEmpty {
                    let entries = try entries(acl, t, access, c)
                    for k in created {
                        for e in entries {
                            try tx.setPrivileges(
                                e.privileges, granted: true, role: e.role, on: .object(t.name, k), by: access,
                                creator: true)
                        }
                    }
                }
                return ids
            }
        }
        return try ids.compactMap { try c.object(t.name, $0) }
    }

    /// Deletes the objects `filter` selects that the caller may read and delete (read first,
    /// then deleted in one transaction if they are still there and still theirs to delete); how many.
    static func delete(_ t: ObjectSchema, matching filter: String, _ c: GraphQLContext) throws -> Int {
        let keys = try c.objects(t.name, ObjectQuery(filter: filter)).map(\.identity)
        guard !keys.isEmpty else { return 0 }
        let (deleted, _) = try resolving {
            try c.store.write(to: c.path, origin: c.origin) { tx -> Int in
                let access = try c.viewer.access(in: tx)
                try require(.update, access.realm, "deleting a \(t.name) in", .realm)
                try require(.delete, access.realm, "deleting a \(t.name) in", .realm)
                try require(.delete, access.privileges(ofType: t.name), "deleting a", .type(t.name))
                var n = 0
                for key in keys where try tx.privileges(of: t.name, key, access)?.contains(.delete) == true {
                    try tx.delete(t.name, key)
                    n += 1
                }
                return n
            }
        }
        return deleted
    }

    /// The most entries an `acl` argument takes.
    static let maxACL = 100

    /// The ACL entries a create gives its new objects: `acl` as given, or the creator's own.
    static func entries(_ acl: Map, _ t: ObjectSchema, _ access: RealmAccess, _ c: GraphQLContext) throws
        -> [RolePrivileges]
    {
        guard let given = acl.array else {
            let own = access.privileges(ofType: t.name).intersection([.read, .update, .delete, .setPermissions])
            guard let id = c.viewer.id, !access.isUnrestricted, !own.isEmpty else { return [] }
            return [RolePrivileges(role: PermissionTypes.personalRole(of: id), privileges: own)]
        }
        guard given.count <= maxACL else {
            throw GraphQLError(
                message: "acl lists at most \(maxACL) roles (one entry per role); it has \(given.count).")
        }
        return try given.map { e in
            let names = (e["privileges"].array ?? []).compactMap(\.string).joined(separator: ",")
            return RolePrivileges(role: e["role"].string ?? "", privileges: try Privileges(names: names))
        }
    }

    /// Fails with a GraphQL error naming the level (the Realm, the type or the object) where
    /// `need` is missing for the object of `type` with `key`.
    static func require(
        _ need: Privileges, _ type: String, _ key: RealmAdapter.Value, _ access: RealmAccess, _ tx: WriteTransaction,
        _ action: String
    ) throws {
        try require(need, access.realm, "\(action) a \(type) in", .realm)
        try require(need, access.privileges(ofType: type), "\(action) a", .type(type))
        try require(need, try tx.privileges(of: type, key, access) ?? [], action, .object(type, key))
    }

    /// Fails with a GraphQL error naming what is missing unless `have` holds `need`.
    static func require(_ need: Privileges, _ have: Privileges, _ action: String, _ target: PermissionTarget)
        throws
    {
        let missing = need.subtracting(have)
        guard missing.isEmpty else {
            throw GraphQLError(message: RealmAdapterError.permissionDenied(action, target, missing: missing).message)
        }
    }

    /// `body`, its store errors as GraphQL errors with their message alone (no log context).
    static func resolving<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as RealmAdapterError {
            throw GraphQLError(message: e.message)
        }
    }

    /// Deletes the object with `key`; false if there was none.
    static func delete(_ t: ObjectSchema, _ key: RealmAdapter.Value, _ c: GraphQLContext) throws -> Bool {
        let (deleted, _) = try resolving {
            try c.store.write(to: c.path, origin: c.origin) { tx -> Bool in
                let key = try key.coercedKey(of: t.name, in: c.schema)
                let access = try c.viewer.access(in: tx)
                guard try tx.object(t.name, key) != nil else { return false }
                try require(.update, access.realm, "deleting a \(t.name) in", .realm)
                try require(.delete, t.name, key, access, tx, "deleting")
                try tx.delete(t.name, key)
                return true
            }
        }
        return deleted
    }

    /// An input object's values, coerced to the properties by the core's rules (links by key).
    static func values(_ t: ObjectSchema, _ input: Map, _ schema: Schema) throws -> PropertyValues {
        guard case .dictionary(let fields) = input else {
            throw GraphQLError(message: "\(t.name)Input: expected an object.")
        }
        var values = PropertyValues()
        for (name, value) in fields {
            if case .undefined = value { continue }
            guard let p = t.properties.first(where: { $0.name == name }) else {
                throw GraphQLError(message: "\(t.name) has no property \(name).")
            }
            do {
                values.append(name, try RealmAdapter.Value(json: GraphQLValues.json(value)).coerced(to: p, in: schema))
            } catch let e as RealmAdapterError {
                throw GraphQLError(message: "\(t.name).\(name): \(e.message)")
            }
        }
        return values
    }
}
