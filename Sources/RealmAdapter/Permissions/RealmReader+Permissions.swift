extension RealmReader {
    /// The access of the user with id `user` (nil: a user in `everyone` only), as the metadata
    /// stands in this transaction. Unrestricted for an admin, or when the Realm has none.
    func access(user: String?, isAdmin: Bool) throws -> RealmAccess {
        guard schema.hasPermissions, !isAdmin else { return .unrestricted }
        var roles: Set<String> = [PermissionTypes.everyone]
        if let user {
            roles.insert(PermissionTypes.personalRole(of: user))
            // Names only: a role's members may be thousands.
            let q = ObjectQuery(linkingTo: .init(property: "members", identity: .string(user)))
            try forEachRow(PermissionTypes.role, q, properties: ["name"]) { row in
                if case .string(let name) = row[0] { roles.insert(name) }
            }
        }
        var levels = RealmAccess.Levels(realm: [], classes: [:], acl: [:])
        if let r = try object(PermissionTypes.realm, .int(0)) {
            levels.realm = try union(of: r.values["permissions"], for: roles)
        }
        try forEachObject(PermissionTypes.class) { c in
            if case .string(let name) = c.identity {
                levels.classes[name] = try union(of: c.values["permissions"], for: roles)
            }
        }
        for t in schema.types {
            if let p = schema.aclProperty(of: t.name) { levels.acl[t.name] = p }
        }
        return RealmAccess(roles: roles, levels: levels)
    }

    /// The privileges that the permissions (`__Permission` keys) of a list give `roles`.
    func union(of list: Value?, for roles: Set<String>) throws -> Privileges {
        var out: Privileges = []
        for p in try permissions(list) where roles.contains(p.role) { out.formUnion(p.privileges) }
        return out
    }

    /// The permissions a list of `__Permission` keys holds, in order (those without a role left out).
    func permissions(_ list: Value?) throws -> [RolePrivileges] {
        guard case .list(let keys)? = list else { return [] }
        return try keys.compactMap { key in
            guard let p = try object(PermissionTypes.permission, key), case .string(let role)? = p.values["role"]
            else { return nil }
            return RolePrivileges(role: role, privileges: Self.privileges(of: p))
        }
    }

    /// The privileges a `__Permission` object grants.
    static func privileges(of permission: RealmObject) -> Privileges {
        var out: Privileges = []
        for n in Privileges.named where permission.values[n.property] == .bool(true) { out.formUnion(n.privilege) }
        return out
    }

    /// What `access` allows on the object of `type` with `key`: its type's privileges, narrowed
    /// by its ACL when the type has one.
    func privileges(of type: String, _ key: Value, _ access: RealmAccess) throws -> Privileges {
        let classLevel = access.privileges(ofType: type)
        guard let acl = access.aclProperty(of: type) else { return classLevel }
        return classLevel.intersection(try union(of: .list(try list(type, key, acl)), for: access.roles))
    }

    /// The list of `__Permission` keys that holds `target`'s permissions: the Realm's, the
    /// type's `__Class` object's, or the object's ACL; nil when there is no such holder.
    func holderList(_ target: PermissionTarget) throws -> Value? {
        switch target {
        case .realm: return try object(PermissionTypes.realm, .int(0))?.values["permissions"]
        case .type(let t):
            guard schema[type: t] != nil else { throw RealmAdapterError.unknownType(t) }
            return try object(PermissionTypes.class, .string(t))?.values["permissions"]
        case .object(let t, let key):
            guard let type = schema[type: t] else { throw RealmAdapterError.unknownType(t) }
            guard let acl = schema.aclProperty(of: t) else { throw RealmAdapterError.noACLProperty(t) }
            let k = try key.coercedKey(of: t, in: schema)
            guard try object(t, k) != nil else { throw RealmAdapterError.objectNotFound(type, k) }
            return .list(try list(t, k, acl))
        }
    }

    /// The SQL condition that `access` may read `t`'s rows (under `alias`): false for a type it
    /// may not read, the ACL's for a type with one, true otherwise.
    func visibility(_ access: RealmAccess, _ t: ObjectSchema, _ tt: TypeTables, alias: String) throws -> (
        String, [StoreArgument]
    ) {
        guard access.canRead(t.name) else { return (db.dialect.literal(false), []) }
        guard let acl = access.aclProperty(of: t.name) else { return (db.dialect.literal(true), []) }
        return try aclCondition(acl, .read, access.roles.sorted(), t, tt, alias: alias)
    }

    /// The SQL condition on `t`'s rows (under `alias`) that their ACL (`property`) grants
    /// `privilege` to one of `roles`, in the store's SQL: a few indexed lookups per row (its
    /// ACL's entries, each permission by its key), stopping at the first that grants it.
    func aclCondition(
        _ property: String, _ privilege: Privileges, _ roles: [String], _ t: ObjectSchema, _ tt: TypeTables,
        alias: String
    ) throws -> (String, [StoreArgument]) {
        guard let j = t.properties.firstIndex(where: { $0.name == property }), let list = tt.listTables[j],
            let n = Privileges.named.first(where: { $0.privilege == privilege })
        else { throw RealmAdapterError.notALink(type: t.name, property: property) }
        let (p, ptt) = try located(PermissionTypes.permission)
        guard let role = p.properties.firstIndex(where: { $0.name == "role" }).flatMap({ ptt.columns[$0] }),
            let bit = p.properties.firstIndex(where: { $0.name == n.property }).flatMap({ ptt.columns[$0] })
        else { throw RealmAdapterError.unknownProperty(type: p.name, property: n.property) }
        guard !roles.isEmpty else { return (db.dialect.literal(false), []) }
        let marks = Array(repeating: "?", count: roles.count).joined(separator: ", ")
        let (l, g) = (alias + "_acl", alias + "_perm")
        let sql = """
            EXISTS (SELECT 1 FROM \(list) \(l) JOIN \(ptt.table) \(g) ON \(g).realm = \(l).realm \
            AND \(g).key = \(l).value WHERE \(l).realm = ? AND \(l).owner = \(alias).\(TypeTables.key) \
            AND \(g).\(bit) = 1 AND \(g).\(role) IN (\(marks)))
            """
        return (sql, [tables.realmId.storeArgument] + roles.map { StoreArgument.key(.string($0)) })
    }
}

extension RealmStore {
    /// What the user with id `user` may do in the Realm at `path` (``RealmAccess``).
    public func access(to path: String, user: String?, isAdmin: Bool) throws -> RealmAccess {
        try read { db in try reader(db, path).access(user: user, isAdmin: isAdmin) }
    }

    /// What `access` allows on the object of `type` with `identity` (nil when there is none).
    public func privileges(of type: String, identity: Value, in path: String, _ access: RealmAccess) throws
        -> Privileges?
    {
        guard identity.isStorableAsIs else { return nil }
        return try read { db in
            let r = try reader(db, path)
            let key = try identity.coercedKey(of: type, in: r.schema)
            guard try r.object(type, key) != nil else { return nil }
            return try r.privileges(of: type, key, access)
        }
    }

    /// The permissions held at `target` in the Realm at `path`, role by role; nil when the
    /// Realm has no metadata or the target no permissions of its own (the level above governs it).
    public func permissions(on target: PermissionTarget, in path: String) throws -> [RolePrivileges]? {
        try read { db in
            let r = try reader(db, path)
            guard r.schema.hasPermissions, let list = try r.holderList(target) else { return nil }
            return try r.permissions(list)
        }
    }

    /// The roles of the Realm at `path` and their members' user ids, by name.
    public func roles(in path: String) throws -> [(name: String, members: [String])] {
        try read { db in
            let r = try reader(db, path)
            guard r.schema.hasPermissions else { return [] }
            return try r.objects(PermissionTypes.role, ObjectQuery()).compactMap { o in
                guard case .string(let name) = o.identity, case .list(let ids)? = o.values["members"] else {
                    return nil
                }
                return (name, ids.compactMap { if case .string(let s) = $0 { s } else { nil } })
            }
        }
    }
}
