import GraphQL
import RealmAdapter

/// Fine-grained permissions through GraphQL, beside each Realm's generated fields (names that
/// start with `_` are left to the server, so no type of the Realm takes them):
/// - queries `_privileges(type:, key:)` (the legacy `getPrivileges`, of the Realm, a type or an
///   object), `_roles`, and `_permissions(type:, key:)`;
/// - mutations `_grant` and `_revoke(role:, privileges:, type:, key:)`, `_addRole`, `_removeRole`,
///   `_addRoleMember` and `_removeRoleMember(role:, userId:)`: each one Realm transaction, checked
///   as the legacy model checks them (``WriteTransaction/setPrivileges(_:granted:role:on:by:)``).
///
/// The metadata types themselves (`__Role`, …) have names GraphQL cannot carry: these fields
/// are how clients read and change them.
enum GraphQLPermissions {
    static func add(query: inout GraphQLFieldMap, mutation: inout GraphQLFieldMap) throws {
        var flags: GraphQLFieldMap = [:]
        for n in Privileges.named {
            flags[n.name] = GraphQLField(
                type: GraphQLNonNull(GraphQLBoolean),
                resolve: { source, _, _, _ in (source as! Privileges).contains(n.privilege) })
        }
        let privileges = try GraphQLObjectType(
            name: "_Privileges",
            description: "What the caller may do (each false where a level above or an ACL does not allow it).",
            fields: flags)
        let role = try GraphQLObjectType(
            name: "_Role", description: "A role: its name and its members' user ids.",
            fields: [
                "name": GraphQLField(type: GraphQLNonNull(GraphQLString), resolve: { s, _, _, _ in (s as! Role).name }),
                "members": GraphQLField(
                    type: GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLString))),
                    resolve: { s, _, _, _ in (s as! Role).members }),
            ])
        let permission = try GraphQLObjectType(
            name: "_Permission", description: "A role's privileges at one level.",
            fields: [
                "role": GraphQLField(
                    type: GraphQLNonNull(GraphQLString), resolve: { s, _, _, _ in (s as! RolePrivileges).role }),
                "privileges": GraphQLField(
                    type: GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLString))),
                    resolve: { s, _, _, _ in (s as! RolePrivileges).privileges.names }),
            ])
        let target: GraphQLArgumentConfigMap = [
            "type": GraphQLArgument(type: GraphQLString, description: "A type (class level); none: the Realm."),
            "key": GraphQLArgument(type: GraphQLString, description: "An object's primary key (object level)."),
        ]
        query["_privileges"] = GraphQLField(
            type: GraphQLNonNull(privileges),
            description: "What the caller may do in the Realm, with a type, or with one object.", args: target,
            resolve: { _, args, context, _ in try Self.privileges(args, context as! GraphQLContext) })
        query["_roles"] = GraphQLField(
            type: GraphQLNonNull(GraphQLList(GraphQLNonNull(role))), description: "The Realm's roles.",
            resolve: { _, _, context, _ in
                let c = context as! GraphQLContext
                guard try c.access().canRead(PermissionTypes.role) else { return [Role]() }
                return try GraphQLMutations.resolving { try c.store.roles(in: c.path).map(Role.init) }
            })
        query["_permissions"] = GraphQLField(
            type: GraphQLList(GraphQLNonNull(permission)),
            description: "The permissions held at the Realm, a type or an object, by role; null when the level "
                + "has none of its own (the level above governs it).",
            args: target,
            resolve: { _, args, context, _ in
                let c = context as! GraphQLContext
                let t = try Self.target(args, c.schema)
                guard try c.access().canRead(PermissionTypes.permission) else { return nil }
                if case .object(let type, let key) = t, try c.object(type, key) == nil { return nil }
                return try GraphQLMutations.resolving { try c.store.permissions(on: t, in: c.path) }
            })
        var change = target
        change["role"] = GraphQLArgument(type: GraphQLNonNull(GraphQLString))
        change["privileges"] = GraphQLArgument(
            type: GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLString))),
            description: "read, update, delete, setPermissions, query, create, modifySchema (or all).")
        for (name, granted) in [("_grant", true), ("_revoke", false)] {
            mutation[name] = GraphQLField(
                type: GraphQLList(GraphQLNonNull(permission)),
                description: granted
                    ? "Grants a role privileges at the Realm, a type or an object; the permissions held there after."
                    : "Takes privileges of a role back; the permissions held there after.",
                args: change,
                resolve: { _, args, context, _ in
                    let c = context as! GraphQLContext
                    let t = try Self.target(args, c.schema)
                    let names = (args["privileges"].array ?? []).compactMap(\.string).joined(separator: ",")
                    let p = try GraphQLMutations.resolving { try Privileges(names: names) }
                    let role = args["role"].string ?? ""
                    if role.hasPrefix(PermissionTypes.personalRolePrefix) {
                        try Self.requireUser(String(role.dropFirst(PermissionTypes.personalRolePrefix.count)), c)
                    }
                    try Self.write(c) { tx, access in
                        try tx.setPrivileges(p, granted: granted, role: role, on: t, by: access)
                    }
                    return try GraphQLMutations.resolving { try c.store.permissions(on: t, in: c.path) }
                })
        }
        let named: GraphQLArgumentConfigMap = ["name": GraphQLArgument(type: GraphQLNonNull(GraphQLString))]
        mutation["_addRole"] = roleMutation("Adds a role without members.", named) { tx, args, access in
            try tx.addRole(args["name"].string ?? "", by: access)
        }
        mutation["_removeRole"] = roleMutation("Removes a role.", named) { tx, args, access in
            try tx.removeRole(args["name"].string ?? "", by: access)
        }
        let member: GraphQLArgumentConfigMap = [
            "role": GraphQLArgument(type: GraphQLNonNull(GraphQLString)),
            "userId": GraphQLArgument(type: GraphQLNonNull(GraphQLString), description: "The user's id."),
        ]
        mutation["_addRoleMember"] = GraphQLField(
            type: GraphQLNonNull(GraphQLBoolean), description: "Makes a user a member of a role.", args: member,
            resolve: { _, args, context, _ in
                let c = context as! GraphQLContext
                let user = args["userId"].string ?? ""
                try Self.requireUser(user, c)
                try Self.write(c) { tx, access in try tx.addMember(user, to: args["role"].string ?? "", by: access) }
                return true
            })
        mutation["_removeRoleMember"] = roleMutation("Takes a user out of a role.", member) { tx, args, access in
            try tx.removeMember(args["userId"].string ?? "", from: args["role"].string ?? "", by: access)
        }
    }

    struct Role: Sendable {
        let name: String
        let members: [String]
        init(_ r: (name: String, members: [String])) {
            name = r.name
            members = r.members
        }
    }

    static func roleMutation(
        _ description: String, _ args: GraphQLArgumentConfigMap,
        _ body: @escaping @Sendable (inout WriteTransaction, Map, RealmAccess) throws -> Void
    ) -> GraphQLField {
        GraphQLField(
            type: GraphQLNonNull(GraphQLBoolean), description: description, args: args,
            resolve: { _, a, context, _ in
                try Self.write(context as! GraphQLContext) { tx, access in try body(&tx, a, access) }
                return true
            })
    }

    /// One Realm transaction changing the metadata, as the caller. A Realm without metadata gets
    /// it by the first change, which so takes manage on its path: until then, path permissions
    /// alone govern it.
    static func write(_ c: GraphQLContext, _ body: (inout WriteTransaction, RealmAccess) throws -> Void) throws {
        _ = try GraphQLMutations.resolving {
            try c.store.write(to: c.path, origin: c.origin) { tx in
                if !tx.schema.hasPermissions, c.level < .manage {
                    throw GraphQLError(
                        message: "\(c.path) has no fine-grained permissions yet: turning them on (its first role or "
                            + "grant) takes manage on the path, which the user has not.")
                }
                try body(&tx, try c.viewer.access(in: tx))
            }
        }
    }

    /// Fails unless the server has a user with this id (a role's member, a personal role's user).
    static func requireUser(_ id: String, _ c: GraphQLContext) throws {
        guard let users = c.users, try users.user(id: id) == nil else { return }
        throw GraphQLError(
            message: "There is no user with id '\(id.prefix(100))': a role's members are users' ids (the identity "
                + "POST /auth answers with), and a personal role is __User:<user id>.")
    }

    /// What the caller may do (``privileges(_:_:)`` without the path level): a path the caller
    /// only reads leaves read and query alone.
    static func privileges(_ args: Map, _ c: GraphQLContext) throws -> Privileges {
        let p = try levels(args, c)
        return c.level >= .write ? p : p.intersection([.read, .query])
    }

    static func levels(_ args: Map, _ c: GraphQLContext) throws -> Privileges {
        switch try target(args, c.schema) {
        case .realm: return try c.access().realm
        case .type(let t): return try c.access().privileges(ofType: t)
        case .object(let t, let key):
            guard try c.access().canRead(t) else { return [] }
            return try GraphQLMutations.resolving {
                try c.store.privileges(of: t, identity: key, in: c.path, try c.access())
            }
                ?? []
        }
    }

    /// The target the `type` and `key` arguments name; a key is read as the type's primary key.
    static func target(_ args: Map, _ schema: Schema) throws -> PermissionTarget {
        guard let type = args["type"].string else {
            if args["key"].string != nil {
                throw GraphQLError(message: "key names an object of a type: give type too.")
            }
            return .realm
        }
        guard let t = schema[type: type] else { throw GraphQLError(message: "The Realm has no type \(type).") }
        guard let key = args["key"].string else { return .type(type) }
        guard let pk = t.primaryKeyProperty, case .scalar(let s) = pk.type else {
            throw GraphQLError(message: "\(type) has no primary key: its objects cannot be named.")
        }
        if s == .int {
            guard let i = Int64(key) else { throw GraphQLError(message: "\(type).\(pk.name) is an int: key is not.") }
            return .object(type, .int(i))
        }
        return .object(type, try GraphQLMutations.resolving { try Value.string(key).coercedKey(of: type, in: schema) })
    }
}
