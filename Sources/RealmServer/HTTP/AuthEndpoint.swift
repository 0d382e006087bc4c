import Foundation
import Hummingbird
import NIOPosix
import RealmAdapter

/// `POST /auth` in the legacy shape:
/// - `{"provider": "password", "data": "<name>", "user_info": {"password": "…", "register": false}}`
///   logs in (or, with `register` true, signs up) and answers `{"refresh_token": {"token", "token_data"}}`;
/// - `{"provider": "realm", "data": "<refresh token>", "path": "/~/x"}` answers
///   `{"access_token": {"token", "token_data": {"identity", "path", "access", "expires"}}}` for
///   that Realm, at the user's level there (`/~/` is their own directory);
/// - `{"provider": "jwt", "data": "<token of the app's auth service>"}` (with `server.jwt`) logs
///   in the user the token names, added at first sight, and answers as `password` does;
/// - `{"provider": "anonymous"}` (with `server.allowAnonymous`) logs in a new user each time;
/// - `{"provider": "nickname", "data": "<name>", "user_info": {"is_admin": false}}` (with
///   `server.allowNickname`, for development) logs in whoever gives the name.
struct AuthEndpoint: Sendable {
    let users: UserDirectory
    let passwords: PasswordCheck
    let tokens: Tokens?
    /// Provider `jwt`, when `server.jwt` is set.
    let external: ExternalTokens?
    /// `allowSignUp`, `allowAnonymous`, `allowNickname`, `requireEmailConfirmation`.
    let configuration: ServerConfiguration
    /// Confirmations of new users' addresses (`server.email`).
    let mail: AccountMail?

    func answer(_ body: Data) async throws -> Response {
        guard let tokens else {
            throw ServerError(404, "Authentication is disabled (server.disableAuthentication): no tokens are needed.")
        }
        guard case .object(let members) = try? JSONValue(parsing: body) else {
            throw ServerError.badRequest("POST /auth takes a JSON object: provider, data, and user_info or path.")
        }
        func string(_ key: String, in m: [JSONValue.Member]) -> String? {
            if case .string(let s)? = m.first(where: { $0.key == key })?.value { s } else { nil }
        }
        switch string("provider", in: members) {
        case "password":
            guard let name = string("data", in: members),
                case .object(let info)? = members.first(where: { $0.key == "user_info" })?.value,
                let password = string("password", in: info)
            else {
                throw ServerError.badRequest(
                    "provider password needs data (the user name) and user_info.password "
                        + "(user_info.register: true to sign up)."
                )
            }
            let register = info.first(where: { $0.key == "register" })?.value == .bool(true)
            if register && !configuration.allowSignUp { throw ServerError.signUpOff() }
            if register && configuration.requireEmailConfirmation && !name.contains("@") {
                throw ServerError.badRequest(
                    "Sign up with your email address as the name (server.requireEmailConfirmation): a link to confirm "
                        + "it is mailed there.")
            }
            // Bcrypt is slow by design (tens of ms a password): off Swift's few task threads, so
            // that a burst of sign-ups does not stall every other request.
            let confirmed = mail == nil
            let user =
                register
                ? try await NIOThreadPool.singleton.runIfActive { [users] in
                    try users.add(name: name, password: password, confirmed: confirmed)
                }
                : try await passwords.verify(name: name, password: password)
            ServerMetrics.login("password", succeeded: user != nil)
            guard let user else { throw ServerError.badCredentials() }
            let confirming = configuration.requireEmailConfirmation
            if register && confirming && !user.emailConfirmed { mail?.request(.emailConfirmation, for: user.name) }
            try user.checkConfirmed(required: confirming)
            return try await Self.refresh(user, tokens)
        case "anonymous":
            guard configuration.allowAnonymous else {
                throw ServerError.providerOff("anonymous", setting: "allowAnonymous")
            }
            ServerMetrics.login("anonymous", succeeded: true)
            return try await Self.refresh(try users.anonymousUser(), tokens)
        case "nickname":
            guard configuration.allowNickname else {
                throw ServerError.providerOff("nickname", setting: "allowNickname")
            }
            guard let name = string("data", in: members) else {
                throw ServerError.badRequest("provider nickname needs data: the nickname.")
            }
            var isAdmin = false
            if case .object(let info)? = members.first(where: { $0.key == "user_info" })?.value {
                isAdmin = info.first(where: { $0.key == "is_admin" })?.value == .bool(true)
            }
            ServerMetrics.login("nickname", succeeded: true)
            return try await Self.refresh(try users.externalUser(name, isAdmin: isAdmin, provider: "nickname"), tokens)
        case "jwt":
            guard let external else {
                throw ServerError.badRequest(
                    "Provider jwt is not set up on this server: its operator sets server.jwt (publicKeyFile).")
            }
            guard let token = string("data", in: members) else {
                throw ServerError.badRequest("provider jwt needs data: the token your auth service signed.")
            }
            let (id, isAdmin): (String, Bool)
            do { (id, isAdmin) = try await external.identity(token) } catch {
                ServerMetrics.login("jwt", succeeded: false)
                throw error
            }
            ServerMetrics.login("jwt", succeeded: true)
            return try await Self.refresh(try users.externalUser(id, isAdmin: isAdmin, provider: "jwt"), tokens)
        case "realm":
            guard let refresh = string("data", in: members), let asked = string("path", in: members) else {
                throw ServerError.badRequest("provider realm needs data (a refresh token) and path (the Realm's path).")
            }
            let claims: TokenClaims
            do { claims = try await tokens.verify(refresh) } catch let e as ServerError where e.status == 401 {
                throw e.isTokenExpiry ? ServerError.refreshExpired() : e
            }
            guard claims.isLogin else { throw ServerError.wrongToken("a refresh token in data") }
            let user = try users.current(claims)
            let path = try user.resolve(asked)
            do { try RealmPath.validate(path) } catch { throw ServerError.badRequest("\(asked) is not a Realm path.") }
            let level = try users.level(of: user, at: path)
            guard level > .none else { throw ServerError.forbidden(path, need: .read, have: level) }
            let (token, access) = try await tokens.accessToken(for: user, path: path, level: level, from: claims)
            return Self.json([
                .init(
                    "access_token",
                    .object([
                        .init("token", .string(token)),
                        .init(
                            "token_data",
                            .object([
                                .init("identity", .string(user.id)), .init("path", .string(path)),
                                .init("access", .array(level.legacyAccess.map(JSONValue.string))),
                                .init("expires", .int(Int64(access.exp.value.timeIntervalSince1970))),
                            ])),
                    ]))
            ])
        case let other:
            throw ServerError.badRequest(
                "Unknown provider \(other.map { "'\($0)'" } ?? "(none)"): use password (log in), jwt (a token "
                    + "of your auth service, with server.jwt), anonymous or nickname (when the server allows them) "
                    + "or realm (an access token).")
        }
    }

    /// The answer of a login: a refresh token for `user`.
    static func refresh(_ user: User, _ tokens: Tokens) async throws -> Response {
        let (token, claims) = try await tokens.refreshToken(for: user)
        return Self.json([
            .init(
                "refresh_token",
                .object([
                    .init("token", .string(token)),
                    .init(
                        "token_data",
                        .object([
                            .init("identity", .string(user.id)), .init("is_admin", .bool(user.isAdmin)),
                            .init("expires", .int(Int64(claims.exp.value.timeIntervalSince1970))),
                        ])),
                ]))
        ])
    }

    static func json(_ members: [JSONValue.Member]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: JSONValue.object(members).serialized() + "\n")))
    }
}
