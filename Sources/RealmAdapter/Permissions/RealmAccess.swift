/// What one user may do in one Realm, read from its permission metadata (``PermissionTypes``)
/// as it stands: the union over the user's roles at each level, each level narrowing the one
/// above it (a type's privileges are the Realm's and the class's; an object's add its ACL's).
///
/// A Realm without metadata, an admin and the operator (the CLI, the adapter) are unrestricted.
public struct RealmAccess: Sendable, Hashable {
    /// The roles the user is in, by name: `everyone`, their personal role, and the roles whose
    /// members they are.
    public let roles: Set<String>
    /// The levels as read; nil when unrestricted.
    let levels: Levels?

    struct Levels: Sendable, Hashable {
        var realm: Privileges
        /// The class level of the types that have a `__Class` object (the others: all).
        var classes: [String: Privileges]
        /// The ACL property of each type that has one.
        var acl: [String: String]
    }

    /// No check at all.
    public static let unrestricted = RealmAccess(roles: [], levels: nil)

    public var isUnrestricted: Bool { levels == nil }

    /// The Realm level.
    public var realm: Privileges { levels?.realm ?? .all }

    /// The class level of `type`, within the Realm level. A type without a `__Class` object
    /// (added after the metadata) is governed by the Realm level alone.
    public func privileges(ofType type: String) -> Privileges {
        guard let levels else { return .all }
        return levels.realm.intersection(levels.classes[type] ?? .all)
    }

    /// The ACL property of `type` when its objects have object-level permissions for this user.
    public func aclProperty(of type: String) -> String? { levels?.acl[type] }

    /// Whether the user may read objects of `type` at all (its Realm and class levels; an ACL
    /// then decides per object).
    public func canRead(_ type: String) -> Bool { privileges(ofType: type).contains(.read) }
}

/// Where a permission applies: the Realm, a type (class level), or one object.
public enum PermissionTarget: Sendable, Hashable, CustomStringConvertible {
    case realm
    case type(String)
    case object(String, Value)

    public var description: String {
        switch self {
        case .realm: "the Realm"
        case .type(let t): t
        case .object(let t, let key): "\(t) \(key)"
        }
    }
}

/// A permission as the metadata holds it: a role and its privileges at one target.
public struct RolePrivileges: Sendable, Hashable {
    public var role: String
    public var privileges: Privileges
    public init(role: String, privileges: Privileges) {
        self.role = role
        self.privileges = privileges
    }
}
