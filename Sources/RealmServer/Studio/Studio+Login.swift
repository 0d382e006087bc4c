import Foundation
import Hummingbird
import NIOPosix
import RealmAdapter

/// Logging in to Studio with a user's name and password, and out.
extension Studio {
    /// `GET /studio/login`: the form, or straight to the Realms for a session that holds.
    func loginForm(_ request: Request) async -> Response {
        let current = try? await session(request)
        if server.tokens == nil || current != nil { return Response.redirect(to: "realms", type: .normal) }
        return loginPage(request, notice: nil)
    }

    /// The login form, with a fresh double-submit value in its cookie and its hidden field.
    func loginPage(_ request: Request, notice: String?, status: HTTPResponse.Status = .ok) -> Response {
        let value = UUID().uuidString
        var headers = HTTPFields()
        let cookie = StudioSession.cookie(StudioSession.loginCookie, value, maxAge: 3600, secure: isSecure(request))
        headers[values: .setCookie].append(cookie.description)
        // A page other than the login form's own sends the browser there, so that the form posts to it.
        let atLogin = request.uri.path.hasSuffix("/studio/login")
        if !atLogin, request.method == .get {
            var response = Response.redirect(to: "login", type: .normal)
            if let notice { response.headers[values: .setCookie].append(Self.noticeCookie(notice).description) }
            return response
        }
        let shown = notice ?? request.cookies[Self.noticeName]?.value.removingPercentEncoding
        headers[values: .setCookie].append(Self.noticeCookie(nil).description)
        return page(
            "Log in", template: "login", ["csrf": value], session: nil, notice: shown, status: status, headers: headers)
    }

    /// `POST /studio/login` (a form: name, password, csrf).
    func logIn(_ request: Request) async throws -> Response {
        guard let tokens = server.tokens else { return Response.redirect(to: "realms", type: .normal) }
        let form = RealmHTTPServer.formParameters(
            String(decoding: try await RealmHTTPServer.body(request), as: UTF8.self))
        guard let sent = request.cookies[StudioSession.loginCookie]?.value,
            StudioSession.same(sent, form["csrf"] ?? "")
        else {
            return loginPage(
                request, notice: "The login form had expired (or cookies are off): type your name and password again.",
                status: .forbidden)
        }
        let (name, password) = (form["name"] ?? "", form["password"] ?? "")
        let user: User?
        do { user = try await server.passwords.verify(name: name, password: password) } catch let e as ServerError {
            return loginPage(request, notice: e.message, status: HTTPResponse.Status(code: e.status))
        }
        guard let user else {
            return loginPage(request, notice: ServerError.badCredentials().message, status: .unauthorized)
        }
        do {
            try user.checkConfirmed(required: server.configuration.requireEmailConfirmation)
        } catch let e as ServerError {
            return loginPage(request, notice: e.message, status: .forbidden)
        }
        let (token, _) = try await tokens.refreshToken(for: user)
        var response = Response.redirect(to: "realms", type: .normal)
        // A day past the login's end, so that the browser still sends it then and is told it expired.
        let lifetime = Int(server.configuration.refreshTokenLifetime.components.seconds) + 86_400
        response.setCookie(
            StudioSession.cookie(StudioSession.cookie, token, maxAge: lifetime, secure: isSecure(request)))
        response.setCookie(StudioSession.cookie(StudioSession.loginCookie, "", maxAge: 0, secure: isSecure(request)))
        return response
    }

    /// `POST /studio/logout`: ends the login everywhere (as `POST /auth/revoke`) and the cookie.
    func logOut(_ request: Request, _ session: StudioSession) throws -> Response {
        if let claims = session.claims { try server.users.revoke(claims) }
        var response = Response.redirect(to: "login", type: .normal)
        response.setCookie(StudioSession.cookie(StudioSession.cookie, "", maxAge: 0, secure: isSecure(request)))
        response.setCookie(Self.noticeCookie("You have logged out."))
        return response
    }

    /// Why the browser was sent to the login page, carried there in a short-lived cookie.
    static let noticeName = "studio_notice"

    static func noticeCookie(_ notice: String?) -> Cookie {
        let value = notice?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return StudioSession.cookie(noticeName, value, maxAge: notice == nil ? 0 : 60, secure: false)
    }
}
