import Foundation
import Hummingbird
import NIOPosix

/// The pages the links of ``AccountMail`` open: a form to choose a new password, and one to
/// confirm an address. Opening a link changes nothing (mail scanners open links); the form's
/// button does, once. The forms post to a relative address, so that they work behind a proxy
/// that serves the server under a path (`publicURL` `https://example.com/realms`).
struct AccountPages: Sendable {
    let users: UserDirectory

    /// `GET /auth/password/reset?token=…`
    func resetForm(_ query: [String: String]) -> Response {
        guard let token = query["token"], !token.isEmpty else { return Self.missingToken() }
        return HTMLPage.response(
            title: "Choose a new password",
            """
            <form method="post" action="reset">
            <input type="hidden" name="token" value="\(HTMLPage.escape(token))">
            <label>New password (8 to 72 bytes) <input type="password" name="new_password" minlength="8" required \
            autocomplete="new-password"></label>
            <button type="submit">Set the password</button>
            </form>
            """)
    }

    /// `POST /auth/password/reset` (a form: token, new_password).
    func reset(_ body: Data) async -> Response {
        let form = RealmHTTPServer.formParameters(String(decoding: body, as: UTF8.self))
        guard let token = form["token"] else { return Self.missingToken() }
        guard let password = form["new_password"], !password.isEmpty else {
            return HTMLPage.response(
                .badRequest, title: "No password given",
                HTMLPage.paragraph("Go back to the link's page and type a new password (8 to 72 bytes)."))
        }
        do {
            _ = try await NIOThreadPool.singleton.runIfActive { [users] in
                try users.resetPassword(token: token, password: password)
            }
            return HTMLPage.response(
                title: "Password changed",
                HTMLPage.paragraph("Your password is changed: log in with it in your app. Older logins have ended."))
        } catch {
            return Self.failure(error)
        }
    }

    /// `GET /auth/confirm?token=…`
    func confirmForm(_ query: [String: String]) -> Response {
        guard let token = query["token"], !token.isEmpty else { return Self.missingToken() }
        return HTMLPage.response(
            title: "Confirm your email address",
            """
            <form method="post" action="confirm">
            <input type="hidden" name="token" value="\(HTMLPage.escape(token))">
            <button type="submit">Confirm</button>
            </form>
            """)
    }

    /// `POST /auth/confirm` (a form: token).
    func confirm(_ body: Data) -> Response {
        let form = RealmHTTPServer.formParameters(String(decoding: body, as: UTF8.self))
        guard let token = form["token"] else { return Self.missingToken() }
        do {
            _ = try users.confirmEmail(token: token)
            return HTMLPage.response(
                title: "Address confirmed", HTMLPage.paragraph("Thank you: your address is confirmed. You can log in."))
        } catch {
            return Self.failure(error)
        }
    }

    static func missingToken() -> Response {
        HTMLPage.response(
            .badRequest, title: "Link incomplete",
            HTMLPage.paragraph("This link has no token: open the whole link from the mail (it may have been cut)."))
    }

    static func failure(_ error: any Error) -> Response {
        let e = error as? ServerError ?? ServerError(500, "\(error)")
        return HTMLPage.response(
            .init(code: e.status), title: "That did not work", HTMLPage.paragraph(e.message))
    }
}
