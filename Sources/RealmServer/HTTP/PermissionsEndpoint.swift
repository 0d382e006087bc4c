import Foundation
import Hummingbird
import RealmAdapter

/// `/permissions`: what `realm-adapter permission` does, over HTTP, for users who manage a path.
/// - `POST /permissions {"path", "user"?, "level"}` grants `level` (read, write, manage, or
///   none to take a grant back) on `path` to the user named `user`, or to everyone without it.
/// - `GET /permissions?path=…` lists the grants on a path;
/// - `GET /permissions` lists what the caller may reach (the legacy granted permissions: their
///   own Realms and every path granted to them or to everyone, with its level); an admin adds
///   `?user=<name>` for another user's.
///
/// The token is the caller's refresh token (or an access token for that path). Only a user who
/// manages the path (its owner, an admin, or one granted manage) may, and never above their own
/// level. `/~/` is the caller's own directory.
struct PermissionsEndpoint: Sendable {
    let users: UserDirectory
    let tokens: Tokens?
    let store: RealmStore

    /// The caller, the path (resolved) and their level on it; 403 below manage.
    func manager(_ header: String?, _ asked: String) async throws -> (User, String, AccessLevel) {
        let (user, path, have) = try await access(header, asked)
        guard have == .manage else { throw ServerError.forbidden(path, need: .manage, have: have) }
        return (user, path, have)
    }

    /// The caller, the path their `/~/` resolves to, and their level there (an access token
    /// only for its own path).
    func access(_ header: String?, _ asked: String) async throws -> (User, String, AccessLevel) {
        guard let tokens else {
            throw ServerError(404, "Authentication is disabled (server.disableAuthentication): there are no users.")
        }
        let (user, claims) = try await tokens.caller(header, in: users)
        let path = try user.resolve(asked)
        do { try RealmPath.validate(path) } catch { throw ServerError.badRequest("'\(asked)' is not a Realm path.") }
        if claims.kind == "access", claims.path != path {
            throw ServerError.tokenForOtherPath(claims.path ?? "?", path)
        }
        return (user, path, try users.level(of: user, at: path))
    }

    func grant(_ header: String?, _ body: Data) async throws -> Response {
        let json = try RealmHTTPServer.object(
            body, "POST /permissions takes a JSON object: path, level, and user (or none).")
        func string(_ key: String) -> String? { if case .string(let s)? = json[key] { s } else { nil } }
        guard let asked = string("path"), let name = string("level"), let level = AccessLevel(name: name) else {
            throw ServerError.badRequest("path and level (read, write, manage or none) are required.")
        }
        let (_, path, have) = try await manager(header, asked)
        guard level <= have else { throw ServerError.forbidden(path, need: level, have: have) }
        var userId: String?
        if let user = string("user") {
            guard let u = try users.user(named: user) else { throw ServerError.noSuchUser(user) }
            userId = u.id
        }
        try users.grant(level, on: path, to: userId)
        return AuthEndpoint.json([
            .init("path", .string(path)), .init("user", string("user").map(JSONValue.string) ?? .null),
            .init("level", .string(level.description)),
        ])
    }

    func list(_ header: String?, _ query: [String: String]) async throws -> Response {
        guard let asked = query["path"] else { return try await reachable(header, query) }
        let (_, path, _) = try await manager(header, asked)
        let names = Dictionary(uniqueKeysWithValues: try users.users().map { ($0.id, $0.name) })
        let grants = try users.permissions(on: path).map { g -> JSONValue in
            .object([
                .init("user", g.userId.map { JSONValue.string(names[$0] ?? $0) } ?? .null),
                .init("level", .string(g.level.description)),
            ])
        }
        return AuthEndpoint.json([.init("path", .string(path)), .init("grants", .array(grants))])
    }
}

extension PermissionsEndpoint {
    /// `GET /permissions` without a path: what the caller (or, for an admin, `?user=`) may reach.
    func reachable(_ header: String?, _ query: [String: String]) async throws -> Response {
        guard let tokens else {
            throw ServerError(404, "Authentication is disabled (server.disableAuthentication): there are no users.")
        }
        switch query["recipient"] {
        case nil, "currentUser", "any": break
        case let other?:
            throw ServerError.badRequest(
                "recipient '\(other)' is not supported: GET /permissions lists what you may reach; the grants on "
                    + "a path you manage are at GET /permissions?path=….")
        }
        var (user, _) = try await tokens.caller(header, in: users)
        if let name = query["user"] {
            guard user.isAdmin else { throw ServerError.adminsOnly("list what another user may reach") }
            guard let other = try users.user(named: name) else { throw ServerError.noSuchUser(name) }
            user = other
        }
        let own = try store.realmPaths(under: "/\(user.id)")
        let permissions = try users.reachable(by: user, ownRealms: own).map { path, level -> JSONValue in
            .object([
                .init("path", .string(path)), .init("accessLevel", .string(level.legacyName)),
                .init("userId", .string(user.id)), .init("mayRead", .bool(level >= .read)),
                .init("mayWrite", .bool(level >= .write)), .init("mayManage", .bool(level >= .manage)),
            ])
        }
        return AuthEndpoint.json([
            .init("userId", .string(user.id)), .init("isAdmin", .bool(user.isAdmin)),
            .init("permissions", .array(permissions)),
        ])
    }
}
