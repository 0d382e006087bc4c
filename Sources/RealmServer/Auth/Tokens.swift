import Foundation
import JWTKit
import RealmAdapter

/// What a token says: whose it is, until when, and, for an access token, which Realm and what
/// may be done with it (legacy `access`: download, upload, manage).
public struct TokenClaims: JWTPayload, Sendable {
    public var sub: SubjectClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    /// `refresh` (a login) or `access` (one Realm path).
    public var kind: String
    public var admin: Bool?
    public var path: String?
    public var access: [String]?
    /// The user's password generation when it was signed (``User/generation``).
    public var generation: Int?
    /// The token's own id: a refresh token's ends it and every access token made from it
    /// (`POST /auth/revoke`); an admin token's is its row in the directory.
    public var jti: String?
    /// An access token's refresh token (its `jti`).
    public var rid: String?

    /// A token that logs someone in: a refresh token, or an admin token (`user admin-token`).
    var isLogin: Bool { kind == "refresh" || kind == "admin" }

    public func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }

    /// The level an access token carries.
    var level: AccessLevel { AccessLevel(rawValue: access?.count ?? 0) ?? .none }
}

/// Signs and checks the server's tokens (HMAC-SHA256 JWTs with the key from the environment).
public struct Tokens: Sendable {
    let keys: JWTKeyCollection
    let configuration: ServerConfiguration

    public init(key: Secret, configuration: ServerConfiguration) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: key.value), digestAlgorithm: .sha256)
        self.configuration = configuration
    }

    /// A user's login: lets them ask for access tokens (and, for an admin, use any Realm).
    public func refreshToken(for user: User, now: Date = Date()) async throws -> (token: String, claims: TokenClaims) {
        let claims = TokenClaims(
            sub: .init(value: user.id), exp: .init(value: now + configuration.refreshTokenLifetime.seconds),
            iat: .init(value: now), kind: "refresh", admin: user.isAdmin, generation: user.generation,
            jti: UserDirectory.newId())
        return (try await keys.sign(claims), claims)
    }

    /// A named admin token (`user admin-token create`): an admin's key to every Realm that does
    /// not expire, and ends when its row in the directory is removed.
    public func adminToken(name: String, id: String, now: Date = Date()) async throws -> String {
        let claims = TokenClaims(
            sub: .init(value: name), exp: .init(value: now + 100 * 365 * 86_400), iat: .init(value: now),
            kind: "admin", admin: true, jti: id)
        return try await keys.sign(claims)
    }

    /// Access to the Realm at `path` at `level`, for a short while.
    /// It ends with `refresh`, the login it was made from.
    public func accessToken(
        for user: User, path: String, level: AccessLevel, from refresh: TokenClaims, now: Date = Date()
    ) async throws -> (token: String, claims: TokenClaims) {
        let claims = TokenClaims(
            sub: .init(value: user.id), exp: .init(value: now + configuration.accessTokenLifetime.seconds),
            iat: .init(value: now), kind: "access", admin: user.isAdmin, path: path, access: level.legacyAccess,
            generation: user.generation, jti: UserDirectory.newId(), rid: refresh.jti)
        return (try await keys.sign(claims), claims)
    }

    /// The token in an `Authorization` header: bare, or after `Bearer ` (any case).
    static func token(fromHeader header: String) -> String {
        header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)) : header
    }

    /// The claims of a token signed with this key and not expired.
    public func verify(_ token: String) async throws -> TokenClaims {
        do {
            return try await keys.verify(token, as: TokenClaims.self)
        } catch let e as JWTError where e.errorType == .claimVerificationFailure {
            throw ServerError.tokenExpired()
        } catch {
            throw ServerError.tokenInvalid()
        }
    }
}

extension Tokens {
    /// The user an `Authorization` header's token (any of theirs) names, and its claims.
    func caller(_ header: String?, in users: UserDirectory) async throws -> (User, TokenClaims) {
        guard let header else { throw ServerError.tokenMissing() }
        let claims: TokenClaims
        do { claims = try await verify(Tokens.token(fromHeader: header)) } catch let e as ServerError
            where e.isTokenExpiry
        {
            throw ServerError(401, "The token has expired: log in again (POST /auth) for a new one.")
        }
        return (try users.current(claims), claims)
    }
}

extension Duration {
    var seconds: TimeInterval { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
