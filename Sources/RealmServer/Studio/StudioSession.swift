import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import RealmAdapter

/// Who is looking at Studio: the user whose login the session cookie holds (a refresh token,
/// signed and revocable like any other, so that logging out anywhere ends it), and the CSRF token
/// each of their forms carries back.
struct StudioSession: Sendable {
    /// Nil when the server checks no tokens (`server.disableAuthentication`): then an admin.
    let user: User?
    let claims: TokenClaims?
    /// What every form and state-changing request of this session sends back, as `csrf`.
    let csrf: String

    var isAdmin: Bool { user?.isAdmin ?? true }
    var name: String { user?.name ?? "admin (authentication disabled)" }
    /// The origin of the Realm transactions this session makes (the user's id, as GraphQL's `user:<id>`).
    var origin: String { "studio:\(user?.id ?? "admin")" }
    var viewer: Viewer { Viewer(user) }

    /// The session cookie: the login's refresh token, for Studio's pages only.
    static let cookie = "studio"
    /// Before logging in: a random value the login form carries back (double submit), so that
    /// another site cannot log a browser in as someone else.
    static let loginCookie = "studio_login"

    /// The CSRF token of a session: a hash of its cookie, which another site can neither read
    /// nor compute, and the same on every replica of the server.
    static func csrf(for cookie: String) -> String {
        SHA256.hash(data: Data(("realm-adapter studio csrf\0" + cookie).utf8)).map { String(format: "%02x", $0) }
            .joined()
    }

    /// Whether `sent` is this session's CSRF token (compared in constant time).
    func accepts(csrf sent: String?) -> Bool { Self.same(sent ?? "", csrf) }

    static func same(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count, !x.isEmpty else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// A cookie of Studio's: HttpOnly, SameSite=Strict, for `/studio` only, and Secure when the
    /// browser reached the server over TLS (its own, or a proxy's that says so).
    static func cookie(_ name: String, _ value: String, maxAge: Int, secure: Bool) -> Cookie {
        Cookie(
            name: name, value: value, maxAge: maxAge, path: "/studio", secure: secure, httpOnly: true,
            sameSite: .strict)
    }
}

extension Studio {
    /// The session of `request`'s cookie; ``StudioError/loggedOut(_:)`` when there is none
    /// that still holds (expired, revoked, its user gone or their password changed).
    func session(_ request: Request) async throws -> StudioSession {
        guard let tokens = server.tokens else {
            return StudioSession(user: nil, claims: nil, csrf: unauthenticatedCSRF)
        }
        guard let token = request.cookies[StudioSession.cookie]?.value, !token.isEmpty else {
            throw StudioError.loggedOut(nil)
        }
        let claims: TokenClaims
        do {
            claims = try await tokens.verify(token)
        } catch {
            throw StudioError.loggedOut("Your session has expired: log in again.")
        }
        guard claims.kind == "refresh" else { throw StudioError.loggedOut(nil) }
        do {
            let user = try server.users.current(claims)
            return StudioSession(user: user, claims: claims, csrf: StudioSession.csrf(for: token))
        } catch let e as ServerError {
            throw StudioError.loggedOut(e.message)
        }
    }

    /// Whether the browser reached the server over TLS: cookies are then Secure.
    func isSecure(_ request: Request) -> Bool {
        server.configuration.tls != nil || request.headers[.xForwardedProto]?.lowercased() == "https"
    }
}

extension HTTPField.Name {
    static let xForwardedProto = Self("X-Forwarded-Proto")!
}
