/// Changes to a Realm's permission metadata, as Realm transactions like any other (history,
/// change events, webhooks), each checked against what the user making it may do.
extension WriteTransaction {
    /// What the user with id `user` may do, as of this point in the transaction.
    public func access(user: String?, isAdmin: Bool) throws -> RealmAccess {
        try reader.access(user: user, isAdmin: isAdmin)
    }

    /// What `access` allows on the object of `type` with `key` (nil when there is none).
    public func privileges(of type: String, _ key: Value, _ access: RealmAccess) throws -> Privileges? {
        let k = try key.coercedKey(of: type, in: schema)
        guard try object(type, k) != nil else { return nil }
        return try reader.privileges(of: type, k, access)
    }

    /// Gives the Realm the metadata types and their first objects if it has none: the role
    /// `everyone` with every privilege at the Realm level (so nothing changes until an admin
    /// lowers it). False if it had them.
    @discardableResult
    public mutating func enablePermissions() throws -> Bool {
        guard !schema.hasPermissions else { return false }
        for t in PermissionTypes.types { try addType(t) }
        try create(PermissionTypes.role, ["name": .string(PermissionTypes.everyone), "members": .list([])])
        let all = try newPermission(PermissionTypes.everyone, .all)
        try create(PermissionTypes.realm, ["id": .int(0), "permissions": .list([all])])
        return true
    }

    /// Grants (`granted`) or takes back `privileges` of `role` at `target`. The user (`access`)
    /// needs setPermissions there (for the Realm level, on the class `__Realm`; for a class
    /// level, on the class and on `__Class`, as the legacy model has it), and grants only what
    /// they hold there themselves. A Realm without metadata gets it first (``enablePermissions()``).
    /// - Parameter creator: the user created the object (`target`) in this transaction, and so
    ///   sets its ACL with what they hold on its type, setPermissions or not (the legacy model's
    ///   creator rule: a creator may change what it created in the same transaction).
    public mutating func setPrivileges(
        _ privileges: Privileges, granted: Bool, role: String, on target: PermissionTarget, by access: RealmAccess,
        creator: Bool = false
    ) throws {
        try enablePermissions()
        var held = try holderPrivileges(target, access)
        if creator, case .object(let t, _) = target { held = access.privileges(ofType: t) }
        let guardian: Privileges =
            switch target {
            case .realm: access.privileges(ofType: PermissionTypes.realm)
            case .type: held.intersection(access.privileges(ofType: PermissionTypes.class))
            case .object: held
            }
        guard creator || guardian.contains(.setPermissions) else {
            throw RealmAdapterError.permissionDenied("changing the permissions of", target, missing: .setPermissions)
        }
        if granted, !held.isSuperset(of: privileges) {
            throw RealmAdapterError.grantAboveOwn(target, privileges.subtracting(held))
        }
        try Self.checkRoleName(role)
        try requireRole(role)
        let list = try holder(target)
        if let i = list.keys.firstIndex(where: { roleName(of: $0) == role }) {
            let key = list.keys[i]
            let now = try reader.permissions(.list([key])).first?.privileges ?? []
            let next = granted ? now.union(privileges) : now.subtracting(privileges)
            guard next != now else { return }
            // A __Permission another holder lists too stays as it is for that holder.
            let shared = try isShared(key)
            if next.isEmpty {
                // Nothing left to grant: the entry goes (and its __Permission, unless another holds it).
                try listErase(list.type, list.identity, list.property, at: i)
                if !shared { try delete(PermissionTypes.permission, key) }
            } else if shared {
                try listSet(list.type, list.identity, list.property, at: i, try newPermission(role, next))
            } else {
                var values = PropertyValues()
                for n in Privileges.named where now.contains(n.privilege) != next.contains(n.privilege) {
                    values.append(n.property, .bool(next.contains(n.privilege)))
                }
                try update(PermissionTypes.permission, key, values)
            }
        } else if granted {
            let key = try newPermission(role, privileges)
            try listAppend(list.type, list.identity, list.property, key)
        }
    }

    /// Adds a role (no members). Roles confer privileges, so changing them (roles and members)
    /// needs setPermissions on the class `__Role`.
    public mutating func addRole(_ name: String, by access: RealmAccess) throws {
        try enablePermissions()
        try checkRoleChange(name, access)
        guard try object(PermissionTypes.role, .string(name)) == nil else { throw RealmAdapterError.roleExists(name) }
        try create(PermissionTypes.role, ["name": .string(name), "members": .list([])])
    }

    /// Removes a role; the permissions that named it grant nothing from then on.
    public mutating func removeRole(_ name: String, by access: RealmAccess) throws {
        try checkRoleChange(name, access)
        try requireRole(name)
        try delete(PermissionTypes.role, .string(name))
    }

    /// Makes the user with id `user` a member of `role` (nothing if they are one).
    public mutating func addMember(_ user: String, to role: String, by access: RealmAccess) throws {
        try enablePermissions()
        try checkRoleChange(role, access)
        try requireRole(role)
        try Self.checkRoleName(PermissionTypes.personalRole(of: user))
        try requireUser(user)
        if try !list(PermissionTypes.role, .string(role), "members").contains(.string(user)) {
            try listAppend(PermissionTypes.role, .string(role), "members", .string(user))
        }
    }

    /// Takes the user with id `user` out of `role` (nothing if they are not in it).
    public mutating func removeMember(_ user: String, from role: String, by access: RealmAccess) throws {
        try checkRoleChange(role, access)
        try requireRole(role)
        let members = try list(PermissionTypes.role, .string(role), "members")
        for (i, m) in members.enumerated().reversed() where m == .string(user) {
            try listErase(PermissionTypes.role, .string(role), "members", at: i)
        }
    }

    // MARK: Checks and holders

    private func checkRoleChange(_ role: String, _ access: RealmAccess) throws {
        if role == PermissionTypes.everyone || role.hasPrefix(PermissionTypes.personalRolePrefix) {
            throw RealmAdapterError.reservedRole(role)
        }
        try Self.checkRoleName(role)
        guard access.privileges(ofType: PermissionTypes.role).contains(.setPermissions) else {
            throw RealmAdapterError.permissionDenied("changing", .type(PermissionTypes.role), missing: .setPermissions)
        }
    }

    /// A role's name (a personal role's too): 1 to 200 characters, none of them a control
    /// character, and not starting or ending with a space.
    static func checkRoleName(_ role: String) throws {
        let control = role.unicodeScalars.contains { $0.properties.generalCategory == .control }
        let padded = role.first?.isWhitespace == true || role.last?.isWhitespace == true
        let personal = role.hasPrefix(PermissionTypes.personalRolePrefix) && role == PermissionTypes.personalRolePrefix
        guard !role.isEmpty, role.count <= 200, !control, !padded, !personal else {
            throw RealmAdapterError.invalidRoleName(role)
        }
    }

    /// What `access` holds at `target`.
    private func holderPrivileges(_ target: PermissionTarget, _ access: RealmAccess) throws -> Privileges {
        switch target {
        case .realm: return access.realm
        case .type(let t):
            guard schema[type: t] != nil else { throw RealmAdapterError.unknownType(t) }
            return access.privileges(ofType: t)
        case .object(let t, let key):
            guard let type = schema[type: t] else { throw RealmAdapterError.unknownType(t) }
            guard schema.aclProperty(of: t) != nil else { throw RealmAdapterError.noACLProperty(t) }
            guard let p = try privileges(of: t, key, access) else {
                throw RealmAdapterError.objectNotFound(type, key)
            }
            return p
        }
    }

    /// The list that holds `target`'s permissions, its holder made if it has none: a type's
    /// `__Class` object starts with `everyone` holding every privilege, as the type had.
    private mutating func holder(_ target: PermissionTarget) throws -> (
        type: String, identity: Value, property: String, keys: [Value]
    ) {
        switch target {
        case .realm:
            if try object(PermissionTypes.realm, .int(0)) == nil {
                try create(PermissionTypes.realm, ["id": .int(0), "permissions": .list([])])
            }
            let keys = try list(PermissionTypes.realm, .int(0), "permissions")
            return (PermissionTypes.realm, .int(0), "permissions", keys)
        case .type(let t):
            if try object(PermissionTypes.class, .string(t)) == nil {
                let all = try newPermission(PermissionTypes.everyone, .all)
                try create(PermissionTypes.class, ["name": .string(t), "permissions": .list([all])])
            }
            let keys = try list(PermissionTypes.class, .string(t), "permissions")
            return (PermissionTypes.class, .string(t), "permissions", keys)
        case .object(let t, let key):
            let k = try key.coercedKey(of: t, in: schema)
            let acl = schema.aclProperty(of: t)!
            return (t, k, acl, try list(t, k, acl))
        }
    }

    private func roleName(of permission: Value) -> String? {
        guard case .string(let r)? = try? object(PermissionTypes.permission, permission)?.values["role"] else {
            return nil
        }
        return r
    }

    /// Whether more than one holder lists the `__Permission` with `key`.
    private func isShared(_ key: Value) throws -> Bool {
        var holders = 0
        var lists = [(PermissionTypes.realm, "permissions"), (PermissionTypes.class, "permissions")]
        for t in schema.types { if let acl = schema.aclProperty(of: t.name) { lists.append((t.name, acl)) } }
        for (type, property) in lists {
            holders += try reader.count(type, ObjectQuery(linkingTo: .init(property: property, identity: key)))
            if holders > 1 { return true }
        }
        return false
    }

    private mutating func newPermission(_ role: String, _ privileges: Privileges) throws -> Value {
        var values: PropertyValues = ["role": .string(role)]
        for n in Privileges.named { values.append(n.property, .bool(privileges.contains(n.privilege))) }
        return try create(PermissionTypes.permission, values)
    }

    /// Fails unless the role exists; a personal role is made with its user on first use.
    private mutating func requireRole(_ role: String) throws {
        if try object(PermissionTypes.role, .string(role)) != nil { return }
        guard role.hasPrefix(PermissionTypes.personalRolePrefix) else { throw RealmAdapterError.unknownRole(role) }
        try requireUser(String(role.dropFirst(PermissionTypes.personalRolePrefix.count)))
    }

    /// Makes the `__User` of `id`, with their personal role, if the Realm has none.
    private mutating func requireUser(_ id: String) throws {
        guard try object(PermissionTypes.user, .string(id)) == nil else { return }
        let personal = PermissionTypes.personalRole(of: id)
        if try object(PermissionTypes.role, .string(personal)) == nil {
            try create(PermissionTypes.role, ["name": .string(personal), "members": .list([])])
        }
        try create(PermissionTypes.user, ["id": .string(id), "role": .string(personal)])
        try listAppend(PermissionTypes.role, .string(personal), "members", .string(id))
    }
}
