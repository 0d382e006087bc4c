/// Errors of fine-grained permissions: roles, privileges and what they refuse.
extension RealmAdapterError {
    static func unknownPrivilege(_ name: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "'\(name)' is not a privilege: give one or more of "
                + Privileges.named.map(\.name).joined(separator: ", ") + " (comma-separated), or all")
    }

    static func noACLProperty(_ type: String) -> RealmAdapterError {
        if PermissionTypes.isSystemType(type) {
            return RealmAdapterError(
                .invalidValue,
                "\(type) is a system type: its objects have no permissions of their own (its class level governs them)",
                context: ["type": type])
        }
        return RealmAdapterError(
            .invalidValue,
            "\(type) has no ACL property, so its objects have no permissions of their own: add a list of "
                + "\(PermissionTypes.permission) to it (e.g. \"permissions\": \"\(PermissionTypes.permission)[]\")",
            context: ["type": type])
    }

    /// `privilege` is missing at `target` for what was asked (`action`).
    public static func permissionDenied(_ action: String, _ target: PermissionTarget, missing: Privileges)
        -> RealmAdapterError
    {
        RealmAdapterError(
            .permissionDenied,
            "Permission denied: \(action) \(target) needs the \(missing) privilege there, which the user's roles "
                + "do not have")
    }

    /// A grant of privileges the granter does not hold.
    static func grantAboveOwn(_ target: PermissionTarget, _ privileges: Privileges) -> RealmAdapterError {
        RealmAdapterError(
            .permissionDenied,
            "Permission denied: a user grants only privileges they hold, and at \(target) the user does not hold "
                + "\(privileges)")
    }

    static func unknownRole(_ name: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "The Realm has no role '\(name)': add it first (realm-adapter role add PATH \(name))",
            context: ["role": name])
    }

    static func roleExists(_ name: String) -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "The Realm has a role '\(name)' already", context: ["role": name])
    }

    /// A role name the system keeps: `everyone` and the personal roles.
    static func reservedRole(_ name: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "'\(name)' is a role the server keeps (everyone, and \(PermissionTypes.personalRolePrefix)<user id> "
                + "for each user): its members cannot be changed, nor can it be added or removed",
            context: ["role": name])
    }

    static func invalidRoleName(_ name: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "A role's name is 1 to 200 characters, without control characters or spaces at either end (a personal "
                + "role names its user: __User:<user id>)")
    }
}
