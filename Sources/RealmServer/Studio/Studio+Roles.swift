import Foundation
import Hummingbird
import RealmAdapter

/// A Realm's fine-grained permissions (its manager): the roles and their members, and the
/// privileges each role holds on the Realm and on each type, changed as `realm-adapter role` and
/// `permission --privileges` change them, with the checks of the viewer's own privileges.
extension Studio {
    /// `GET /studio/roles?path=…`
    func roles(
        _ session: StudioSession, _ query: [String: String], notice: String? = nil, error: String? = nil
    ) throws -> Response {
        let path = try Self.required("path", query)
        let (level, schema) = try access(session, path)
        guard level == .manage else { throw ServerError.forbidden(path, need: .manage, have: level) }
        let store = server.store
        let names = Dictionary(try server.users.users().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        let roles: [[String: Any]] = try store.roles(in: path).map { r in
            [
                "role": r.name, "members": r.members.map { names[$0] ?? $0 }.joined(separator: ", "),
                "removable": r.name != "everyone" && !r.name.hasPrefix("__User:"),
            ]
        }
        let types = schema.types.map(\.name).filter { !PermissionTypes.isSystemType($0) }
        let targets: [(String, PermissionTarget)] = [("the Realm", .realm)] + types.map { ($0, .type($0)) }
        let grants: [[String: Any]] = try targets.map { label, target in
            [
                "target": label,
                "holders": (try store.permissions(on: target, in: path) ?? []).map {
                    ["holder": $0.role, "privileges": $0.privileges.description]
                },
            ]
        }
        let values: [String: Any] = [
            "path": path, "realm": Self.link("realm", ["path": path]), "enabled": schema.hasPermissions,
            "roles": roles, "grants": grants, "targets": types, "csrf": session.csrf,
            "privilegeNames": Privileges.all.names.joined(separator: ", "),
        ]
        return page(
            "Roles of \(path)", template: "roles", values, session: session, notice: notice, error: error,
            status: error == nil ? .ok : .badRequest, live: Self.events(path), at: Self.link("roles", ["path": path]))
    }

    /// `POST /studio/roles` (path, action — add-role, remove-role, add-member, remove-member,
    /// grant, revoke —, role, user, target, privileges, csrf): one Realm transaction of the
    /// session's origin. The Roles page again, saying what was done or why not.
    func changeRoles(_ session: StudioSession, _ form: [String: String]) async throws -> Response {
        let path = try Self.required("path", form)
        let level = try access(session, path).level
        guard level == .manage else { throw ServerError.forbidden(path, need: .manage, have: level) }
        let (action, role) = (form["action"] ?? "", (form["role"] ?? "").trimmingCharacters(in: .whitespaces))
        let store = server.store
        do {
            guard !role.isEmpty else { throw ServerError.badRequest("Give the role's name.") }
            // Users first: on a Postgres store the directory is in the database the write locks.
            let userId = try action.hasSuffix("-member") ? memberId(form["user"] ?? "") : ""
            // The Realm is the empty choice; any other names a type (an unknown one is refused).
            let target: PermissionTarget = (form["target"] ?? "").isEmpty ? .realm : .type(form["target"]!)
            let privileges =
                try action == "grant" || action == "revoke" ? Privileges(names: form["privileges"] ?? "") : []
            if action == "grant" || action == "revoke" { try requireUser(ofPersonalRole: role) }
            let viewer = session.viewer
            _ = try await store.perform {
                try store.write(to: path, origin: session.origin) { tx in
                    let access = try viewer.access(in: tx)
                    switch action {
                    case "add-role": try tx.addRole(role, by: access)
                    case "remove-role": try tx.removeRole(role, by: access)
                    case "add-member": try tx.addMember(userId, to: role, by: access)
                    case "remove-member": try tx.removeMember(userId, from: role, by: access)
                    case "grant", "revoke":
                        try tx.setPrivileges(privileges, granted: action == "grant", role: role, on: target, by: access)
                    default: throw ServerError.badRequest("Unknown change \(action).")
                    }
                }
            }
        } catch let e as RealmAdapterError {
            return try roles(session, ["path": path], error: e.message)
        } catch let e as ServerError {
            return try roles(session, ["path": path], error: e.message)
        }
        let on = (form["target"] ?? "").isEmpty ? "the Realm" : form["target"]!
        let member = "\(form["user"] ?? "") in \(role)"
        let what =
            switch action {
            case "grant", "revoke": "\(action) \(form["privileges"] ?? "") on \(on) to \(role)"
            case "add-member", "remove-member": "\(action.replacingOccurrences(of: "-", with: " ")) \(member)"
            default: "\(action.replacingOccurrences(of: "-", with: " ")) \(role)"
            }
        return try roles(session, ["path": path], notice: "Done: \(what).")
    }

    /// What the object page shows of an object's own permissions, for a type with an ACL (a list
    /// of `__Permission`), with GraphQL's checks: each role's privileges on it to a viewer who may
    /// read the permission metadata (as `_permissions`), and a form to one who may write the Realm
    /// and holds `setPermissions` on the object (as `_grant`).
    func objectPermissions(_ context: GraphQLContext, _ type: String, _ key: RealmAdapter.Value) throws -> [String: Any]
    {
        let store = server.store
        guard context.schema.hasPermissions, context.schema.aclProperty(of: type) != nil,
            try context.access().canRead(PermissionTypes.permission)
        else { return ["hasACL": false] }
        let holders = try store.permissions(on: .object(type, key), in: context.path) ?? []
        let own = try store.privileges(of: type, identity: key, in: context.path, try context.access()) ?? []
        return [
            "hasACL": true, "noACLHolders": holders.isEmpty,
            "aclHolders": holders.map { ["holder": $0.role, "privileges": $0.privileges.description] },
            "aclEditable": context.level >= .write && own.contains(.setPermissions),
            "privilegeNames": Privileges.all.names.joined(separator: ", "),
        ]
    }

    /// `POST /studio/object-permissions` (path, type, key, role, privileges, action — grant or
    /// revoke —, csrf): one Realm transaction changing the object's ACL, with GraphQL's checks
    /// (write on the path, `setPermissions` on the object, a personal role of a user who exists).
    /// The object's page again, saying what was done or why not; its type's list if the viewer
    /// no longer sees it.
    func changeObjectPermissions(_ session: StudioSession, _ form: [String: String]) async throws -> Response {
        let (path, typeName, keyText) = (
            try Self.required("path", form), try Self.required("type", form), try Self.required("key", form)
        )
        let page = ["path": path, "type": typeName, "key": keyText]
        let (level, schema) = try access(session, path)
        guard level >= .write else { throw ServerError.forbidden(path, need: .write, have: level) }
        let key = try Self.key(keyText, of: typeName, in: schema)
        let (action, role) = (form["action"] ?? "", (form["role"] ?? "").trimmingCharacters(in: .whitespaces))
        let store = server.store
        let viewer = session.viewer
        do {
            guard action == "grant" || action == "revoke" else {
                throw ServerError.badRequest("Unknown change \(action).")
            }
            guard !role.isEmpty else { throw ServerError.badRequest("Give the role's name.") }
            try requireUser(ofPersonalRole: role)
            let privileges = try Privileges(names: form["privileges"] ?? "")
            _ = try await store.perform {
                try store.write(to: path, origin: session.origin) { tx in
                    let access = try viewer.access(in: tx)
                    try tx.setPrivileges(
                        privileges, granted: action == "grant", role: role, on: .object(typeName, key), by: access)
                }
            }
        } catch let e as RealmAdapterError {
            return try object(session, page, error: e.message)
        } catch let e as ServerError {
            return try object(session, page, error: e.message)
        }
        let done = "\(action) \(form["privileges"] ?? "") on this \(typeName) to \(role)"
        do { return try object(session, page, notice: "Done: \(done).") } catch let e as ServerError
            where e.status == 404
        {
            return Response.redirect(to: Self.link("objects", ["path": path, "type": typeName]), type: .normal)
        }
    }

    /// A personal role (`__User:<id>`) names a user who exists, as GraphQL's `_grant` checks: the
    /// store cannot see the directory.
    func requireUser(ofPersonalRole role: String) throws {
        guard role.hasPrefix(PermissionTypes.personalRolePrefix) else { return }
        let id = String(role.dropFirst(PermissionTypes.personalRolePrefix.count))
        if try server.users.user(id: id) == nil { throw ServerError.noUserOfPersonalRole(role) }
    }

    /// The id of the user named `name` (a role's members are ids).
    func memberId(_ name: String) throws -> String {
        let name = name.trimmingCharacters(in: .whitespaces)
        guard let user = try server.users.user(named: name) else { throw ServerError.noSuchUser(name) }
        return user.id
    }
}
