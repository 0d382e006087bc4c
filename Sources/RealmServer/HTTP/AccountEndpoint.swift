import Foundation
import Hummingbird
import NIOPosix
import RealmAdapter

/// A user's account, in the legacy server's routes:
/// - `POST /auth/revoke {"token"}`: logging out (the token, and for a refresh token every access
///   token made from it, stop working on every server of the store);
/// - `PUT /auth/password {"data": {"new_password", "user_id"?}}`: a new password, with a token of
///   the user (an admin's for another `user_id`), or without one `{"provider_id": name, "data":
///   {"old_password", "new_password"}}`; older tokens end;
/// - `POST /auth/password/updateAccount`: resets and confirmations by mail (``AccountMail``);
/// - `GET /auth/users/<provider>/<provider id>` and `GET /auth/users/<user id>`: an admin's lookup.
struct AccountEndpoint: Sendable {
    let users: UserDirectory
    let passwords: PasswordCheck
    let tokens: Tokens
    let mail: AccountMail?
    /// `server.requireEmailConfirmation`.
    let requireConfirmation: Bool

    func revoke(_ header: String?, _ body: Data) async throws -> Response {
        let json = try RealmHTTPServer.object(body, "POST /auth/revoke takes a JSON object: token (the token to end).")
        guard case .string(let token)? = json["token"] else {
            throw ServerError.badRequest("POST /auth/revoke needs token: the refresh (or access) token to end.")
        }
        let claims: TokenClaims
        do { claims = try await tokens.verify(token) } catch let e as ServerError where e.isTokenExpiry {
            return AuthEndpoint.json([.init("revoked", .bool(false)), .init("reason", .string("already expired"))])
        }
        // Logging out needs no more than the token itself; ending another's takes an admin.
        if let header, Tokens.token(fromHeader: header) != token {
            let (caller, _) = try await tokens.caller(header, in: users)
            guard caller.isAdmin || (claims.kind != "admin" && caller.id == claims.sub.value) else {
                throw ServerError.notYours("revoke a token")
            }
        }
        try users.revoke(claims)
        return AuthEndpoint.json([.init("revoked", .bool(true))])
    }

    func changePassword(_ header: String?, _ body: Data) async throws -> Response {
        let json = try RealmHTTPServer.object(
            body, "PUT /auth/password takes a JSON object: data with new_password (and user_id or old_password).")
        guard case .object? = json["data"], case .string(let password)? = json["data"]?["new_password"] else {
            throw ServerError.badRequest("PUT /auth/password needs data.new_password.")
        }
        let user: User
        if let header {
            // A login's token (not a Realm's short access token), and a body that names no one
            // else: a request for another user is never applied to the caller.
            let (caller, claims) = try await tokens.caller(header, in: users)
            guard claims.isLogin else { throw ServerError.wrongToken("a refresh token (a login), not an access token") }
            switch json["data"]?["user_id"] {
            case nil:
                user = caller
            case .string(let id)? where id == caller.id:
                user = caller
            case .string(let id)?:
                guard caller.isAdmin else { throw ServerError.adminsOnly("change another user's password") }
                guard let other = try users.user(id: id) else { throw ServerError.noSuchUserId(id) }
                user = other
            default:
                throw ServerError.badRequest("data.user_id is a user's id (a string), or absent for your own.")
            }
            if let named = json["provider_id"] {
                guard case .string(let name) = named, name.lowercased() == user.name.lowercased() else {
                    throw ServerError.badRequest(
                        "provider_id names another user than the one whose password this changes: an admin gives "
                            + "data.user_id; without a token, provider_id and data.old_password.")
                }
            }
            if let old = json["data"]?["old_password"] {
                guard case .string(let old) = old, try await passwords.verify(name: user.name, password: old) != nil
                else { throw ServerError.badCredentials() }
            }
        } else {
            guard case .string(let name)? = json["provider_id"], case .string(let old)? = json["data"]?["old_password"]
            else {
                throw ServerError.badRequest(
                    "Without a token, PUT /auth/password needs provider_id (the user name) and data.old_password.")
            }
            let verified = try await passwords.verify(name: name, password: old)
            guard let verified else { throw ServerError.badCredentials() }
            try verified.checkConfirmed(required: requireConfirmation)
            user = verified
        }
        try await NIOThreadPool.singleton.runIfActive { [users] in try users.setPassword(of: user, password: password) }
        return AuthEndpoint.json([.init("user_id", .string(user.id))])
    }

    /// The legacy account actions: `reset_password` and `request_email_confirmation` (with
    /// `provider_id`, the address) answer the same whoever asks; `complete_reset` (token,
    /// new_password) and `confirm_email` (token) spend a mailed token.
    func updateAccount(_ body: Data) async throws -> Response {
        let json = try RealmHTTPServer.object(
            body, "POST /auth/password/updateAccount takes a JSON object: data.action, …")
        guard case .string(let action)? = json["data"]?["action"] else {
            throw ServerError.badRequest(
                "data.action is required: reset_password, complete_reset, request_email_confirmation or confirm_email.")
        }
        guard let mail else { throw ServerError.mailOff() }
        func string(_ value: JSONValue?, _ what: String) throws -> String {
            guard case .string(let s)? = value, !s.isEmpty else { throw ServerError.badRequest("\(what) is required.") }
            return s
        }
        switch action {
        case "reset_password", "request_email_confirmation":
            let address = try string(json["provider_id"], "provider_id (the account's email address)")
            mail.request(action == "reset_password" ? .passwordReset : .emailConfirmation, for: address)
            return AuthEndpoint.json([.init("sent", .string("if this address has an account"))])
        case "complete_reset":
            let token = try string(json["data"]?["token"], "data.token")
            let password = try string(json["data"]?["new_password"], "data.new_password")
            let user = try await NIOThreadPool.singleton.runIfActive { [users] in
                try users.resetPassword(token: token, password: password)
            }
            return AuthEndpoint.json([.init("user_id", .string(user.id))])
        case "confirm_email":
            let user = try users.confirmEmail(token: try string(json["data"]?["token"], "data.token"))
            return AuthEndpoint.json([.init("user_id", .string(user.id))])
        default:
            throw ServerError.badRequest(
                "Unknown action '\(action)': use reset_password, complete_reset, request_email_confirmation "
                    + "or confirm_email.")
        }
    }

    /// An admin's lookup of a user: by id (one segment) or by provider and the id the provider
    /// knows them by (two: `password/alice`), in the legacy shape.
    func lookUp(_ header: String?, _ segments: [String]) async throws -> Response {
        let (caller, _) = try await tokens.caller(header, in: users)
        guard caller.isAdmin else { throw ServerError.adminsOnly("look users up") }
        let found: User?
        switch segments.count {
        case 1: found = try users.user(id: segments[0])
        case 2: found = try users.user(named: segments[1]).flatMap { $0.provider == segments[0] ? $0 : nil }
        default: throw ServerError.badRequest("GET /auth/users/<user id>, or /auth/users/<provider>/<provider id>.")
        }
        guard let user = found else { throw ServerError(404, "There is no such user.") }
        return AuthEndpoint.json([
            .init("user_id", .string(user.id)), .init("is_admin", .bool(user.isAdmin)),
            .init(
                "accounts",
                .array([.object([.init("provider", .string(user.provider)), .init("provider_id", .string(user.name))])])
            ),
            .init(
                "metadata",
                .array([
                    .object([.init("key", .string("email_confirmed")), .init("value", .bool(user.emailConfirmed))])
                ])
            ),
        ])
    }
}
