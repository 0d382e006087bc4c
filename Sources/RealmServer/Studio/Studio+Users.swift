import Foundation
import Hummingbird
import NIOPosix
import RealmAdapter

/// The Users and Permissions pages (admins): the user directory and the path permissions, as the
/// `user` and `permission` commands change them.
extension Studio {
    /// `GET /studio/users?q=…&page=…`
    func users(
        _ session: StudioSession, _ query: [String: String], notice: String? = nil, error: String? = nil
    ) throws -> Response {
        try requireAdmin(session, "manage users")
        let search = (query["q"] ?? "").trimmingCharacters(in: .whitespaces)
        var all = try server.users.users()
        if !search.isEmpty { all = all.filter { $0.name.range(of: search, options: .caseInsensitive) != nil } }
        let pager = StudioPager(total: all.count, query: query, link: "users", keep: ["q": search])
        let rows: [[String: Any]] = all[pager.range].map { u in
            [
                "name": u.name, "id": u.id, "isAdmin": u.isAdmin, "provider": u.provider,
                "hasPassword": u.provider == "password", "isSelf": u.id == session.user?.id,
                "home": Self.link("realms", ["q": "/\(u.id)/"]),
            ]
        }
        let values: [String: Any] = [
            "q": search, "total": all.count, "users": rows, "pager": pager.values, "csrf": session.csrf,
        ]
        return page(
            "Users", template: "users", values, session: session, notice: notice, error: error,
            status: error == nil ? .ok : .badRequest,
            at: Self.link("users", ["q": search, "page": pager.shown].filter { !$0.value.isEmpty })
        )
    }

    /// `POST /studio/add-user`, `remove-user`, `set-admin`, `set-password` (name, and password or
    /// admin; csrf): adds, removes, makes or
    /// unmakes an admin, sets a password. The Users page again, saying what was done or why not.
    func changeUser(_ action: String, _ session: StudioSession, _ form: [String: String]) async throws -> Response {
        try requireAdmin(session, "manage users")
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespaces)
        let users = server.users
        do {
            guard !name.isEmpty else { throw ServerError.badRequest("Give the user's name.") }
            if name == session.user?.name, action == "remove" || action == "admin" && form["admin"] != "1" {
                throw ServerError.badRequest(
                    "You cannot remove yourself or your own admin rights: ask another admin "
                        + "(so that one always remains)."
                )
            }
            let notice: String
            switch action {
            case "add":
                let (password, admin) = (form["password"] ?? "", form["admin"] == "1")
                let user = try await NIOThreadPool.singleton.runIfActive {
                    try users.add(name: name, password: password, admin: admin)
                }
                notice = "Added \(admin ? "admin " : "")\(name) (id \(user.id))."
            case "remove":
                guard try users.remove(name: name) else { throw ServerError.noSuchUser(name) }
                notice = "Removed \(name) and what was granted to them."
            case "admin":
                let admin = form["admin"] == "1"
                try users.setAdmin(name: name, admin)
                notice = admin ? "\(name) is an admin." : "\(name) is no longer an admin."
            default:
                let password = form["password"] ?? ""
                try await NIOThreadPool.singleton.runIfActive { try users.setPassword(name: name, password: password) }
                notice = "Set \(name)'s password; their earlier logins have ended."
            }
            return try self.users(session, [:], notice: notice)
        } catch let e as ServerError {
            return try self.users(session, [:], error: e.message)
        }
    }

    /// `GET /studio/permissions?path=…&page=…`: the grants, on one path or every one.
    func permissions(
        _ session: StudioSession, _ query: [String: String], notice: String? = nil, error: String? = nil
    ) throws -> Response {
        try requireAdmin(session, "manage permissions")
        let path = (query["path"] ?? "").trimmingCharacters(in: .whitespaces)
        let grants = try server.users.permissions(on: path.isEmpty ? nil : path)
        let names = Dictionary(try server.users.users().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        let pager = StudioPager(total: grants.count, query: query, link: "permissions", keep: ["path": path])
        let rows: [[String: Any]] = grants[pager.range].map { g in
            [
                "path": g.path, "realmLink": Self.link("realm", ["path": g.path]), "level": g.level.description,
                "user": g.userId.map { names[$0] ?? $0 } ?? "everyone",
                "userName": g.userId.map { names[$0] ?? "" } ?? "",
            ]
        }
        let values: [String: Any] = [
            "path": path, "filtered": !path.isEmpty, "total": grants.count, "grants": rows, "pager": pager.values,
            "csrf": session.csrf,
        ]
        return page(
            "Permissions", template: "permissions", values, session: session, notice: notice, error: error,
            status: error == nil ? .ok : .badRequest,
            at: Self.link("permissions", ["path": path, "page": pager.shown].filter { !$0.value.isEmpty }))
    }

    /// `POST /studio/permissions` (path, user — a name, or empty for everyone —, level, csrf):
    /// grants the level on the path, or takes a grant back (level none), as `permission grant` does.
    func grant(_ session: StudioSession, _ form: [String: String]) throws -> Response {
        try requireAdmin(session, "manage permissions")
        let path = (form["path"] ?? "").trimmingCharacters(in: .whitespaces)
        let name = (form["user"] ?? "").trimmingCharacters(in: .whitespaces)
        do {
            guard let level = AccessLevel(name: form["level"] ?? "") else {
                throw ServerError.badRequest("A level is none, read, write or manage.")
            }
            var userId: String?
            if !name.isEmpty {
                guard let user = try server.users.user(named: name) else { throw ServerError.noSuchUser(name) }
                userId = user.id
            }
            do { try server.users.grant(level, on: path, to: userId) } catch let e as RealmAdapterError {
                throw ServerError.badRequest(e.message)
            }
            let who = name.isEmpty ? "everyone" : name
            let notice =
                level == .none
                ? "Took back what \(who) was granted on \(path)." : "Granted \(level) on \(path) to \(who)."
            return try permissions(session, [:], notice: notice)
        } catch let e as ServerError {
            return try permissions(session, [:], error: e.message)
        }
    }

    func requireAdmin(_ session: StudioSession, _ what: String) throws {
        guard session.isAdmin else { throw ServerError.adminsOnly(what) }
    }
}
