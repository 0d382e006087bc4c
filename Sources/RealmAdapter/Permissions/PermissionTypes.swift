/// The permission metadata's types, as the legacy platform named and shaped them: Realm data
/// like any other, kept in every Realm that has fine-grained permissions.
///
/// - `__Realm`: one object, `id` 0, whose `permissions` are the Realm level's.
/// - `__Class`: one object per type (`name`), whose `permissions` are the class level's.
/// - `__Role`: a role (`name`) and its `members` (`__User`s).
/// - `__User`: a user (`id`, the server's user id) and their personal role (`role`).
/// - `__Permission`: a `role` and its seven privileges (`canRead`, …).
///
/// A type's objects have object-level permissions when it has an ACL property: a list of
/// `__Permission` (any name).
public enum PermissionTypes {
    public static let realm = "__Realm"
    public static let `class` = "__Class"
    public static let role = "__Role"
    public static let user = "__User"
    public static let permission = "__Permission"
    /// The role every user is a member of.
    public static let everyone = "everyone"
    /// The prefix of the personal roles, `__User:<user id>`, whose only member is that user.
    public static let personalRolePrefix = "__User:"

    /// The personal role of the user with `userId`.
    public static func personalRole(of userId: String) -> String { personalRolePrefix + userId }

    /// Whether a type is a system type: its name starts with `__` (the metadata types).
    public static func isSystemType(_ name: String) -> Bool { name.hasPrefix("__") }

    /// The metadata types, in the order a Realm gets them.
    public static let types: [ObjectSchema] = {
        let permissions = Property(name: "permissions", type: .list(.link(permission)))
        return [
            ObjectSchema(
                name: role, primaryKey: "name",
                properties: [
                    Property(name: "name", type: .scalar(.string)),
                    Property(name: "members", type: .list(.link(user))),
                ]),
            ObjectSchema(
                name: user, primaryKey: "id",
                properties: [Property(name: "id", type: .scalar(.string)), Property(name: "role", type: .link(role))]),
            ObjectSchema(
                name: permission,
                properties: [Property(name: "role", type: .link(role))]
                    + Privileges.named.map {
                        Property(name: $0.property, type: .scalar(.bool), defaultValue: .bool(false))
                    }),
            ObjectSchema(
                name: `class`, primaryKey: "name",
                properties: [Property(name: "name", type: .scalar(.string)), permissions]),
            ObjectSchema(
                name: realm, primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int)), permissions]),
        ]
    }()
}

extension Schema {
    /// Whether the Realm has fine-grained permissions (its metadata types). A Realm without
    /// them is governed by its path's permissions alone.
    public var hasPermissions: Bool { self[type: PermissionTypes.realm] != nil }

    /// The ACL property of `type` (its first list of `__Permission`), or nil when its objects
    /// are governed by the class level alone.
    public func aclProperty(of type: String) -> String? {
        guard !PermissionTypes.isSystemType(type) else { return nil }
        return self[type: type]?.properties.first { $0.type == .list(.link(PermissionTypes.permission)) }?.name
    }
}
