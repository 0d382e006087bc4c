import Foundation
import RealmAdapter

/// An error the server answers with: its HTTP status, and a message that says what to do.
public struct ServerError: Error, CustomStringConvertible, Sendable {
    public var status: Int
    public var message: String
    public var description: String { message }

    init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    static func userExists(_ name: String) -> ServerError {
        ServerError(409, "A user named '\(name)' exists already: log in with register false.")
    }

    static func nameTaken(_ name: String, by provider: String) -> ServerError {
        ServerError(
            409,
            "The user name '\(name)' belongs to a user of provider \(provider), who logs in that way only "
                + "(a user of one provider cannot take over another's account).")
    }

    static func signUpOff() -> ServerError {
        ServerError(
            403,
            "Sign-up is off (server.allowSignUp is false): ask an operator to add you with `realm-adapter user add`.")
    }

    static func noSuchUser(_ name: String) -> ServerError { ServerError(404, "There is no user named '\(name)'.") }

    static func nameTakenInAnotherCase(_ name: String) -> ServerError {
        ServerError(
            409,
            "The user name '\(name)' belongs to another user whose name differs only in case (names compare "
                + "without case): give this identity another id.")
    }

    static func badUserName() -> ServerError {
        ServerError(
            400, "A user name is 1 to 256 characters, without control characters or spaces at either end.")
    }

    static func passwordTooShort() -> ServerError { ServerError(400, "A password has at least 8 characters.") }

    static func passwordUnusable() -> ServerError {
        ServerError(400, "A password has at most 72 bytes (bcrypt reads no more), and no NUL character.")
    }

    static func userGone() -> ServerError {
        ServerError(401, "The token's user no longer exists.")
    }

    static func passwordChanged() -> ServerError {
        ServerError(401, "The token was issued before the user's password changed: log in again (provider password).")
    }

    static func refreshExpired() -> ServerError {
        ServerError(401, "The refresh token has expired: log in again (provider password).")
    }

    static func badCredentials() -> ServerError { ServerError(401, "Wrong user name or password.") }

    static func tooManyLogins(_ wait: Duration) -> ServerError {
        let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
        return ServerError(
            429,
            "Too many wrong passwords for this user name: try again in \(seconds) s "
                + "(server.failedLoginLimit and server.failedLoginWindow set how many, and for how long).")
    }

    static func tokenMissing() -> ServerError {
        ServerError(
            401,
            "This needs a token in the Authorization header: an access token for the Realm's path (POST /auth with "
                + "provider realm), or an admin's refresh token.")
    }

    static func tokenInvalid() -> ServerError {
        ServerError(401, "The token is not valid here (forged, malformed, or signed with another key): log in again.")
    }

    /// Whether this is ``tokenExpired()``: the caller says what to do for its kind of token.
    var isTokenExpiry: Bool { message == Self.tokenExpired().message }

    static func tokenExpired() -> ServerError {
        ServerError(
            401, "The token has expired: get a new one through POST /auth (provider realm for an access token).")
    }

    static func wrongToken(_ want: String) -> ServerError {
        ServerError(401, "This needs \(want).")
    }

    static func tokenForOtherPath(_ tokenPath: String, _ path: String) -> ServerError {
        ServerError(403, "The access token is for \(tokenPath), not \(path): get one for \(path) through POST /auth.")
    }

    static func forbidden(_ path: String, need: AccessLevel, have: AccessLevel) -> ServerError {
        ServerError(
            403,
            "This needs \(need) access to \(path); you have \(have). A user who manages it can grant more "
                + "(`realm-adapter permission grant`).")
    }

    static func cannotCreate(_ path: String) -> ServerError {
        ServerError(
            403,
            "There is no Realm at \(path), and users create Realms only under their own path (/~/…); admins "
                + "create them anywhere.")
    }

    static func noRealm(_ path: String) -> ServerError { ServerError(404, "There is no Realm at \(path).") }

    static func badRequest(_ message: String) -> ServerError { ServerError(400, message) }

    static func bodyTooLarge(_ limit: Int) -> ServerError {
        ServerError(
            413,
            "The request body is larger than \(limit) bytes: send less in one request (several mutations, "
                + "or a query's variables instead of long literals).")
    }

    static func bodyNotJSON(_ why: String) -> ServerError {
        ServerError(
            400,
            "The body is not JSON (\(why)): POST a JSON object {\"query\": …, \"variables\": …} with Content-Type "
                + "application/json.")
    }

    static func variablesNotJSON(_ why: String) -> ServerError {
        ServerError(
            400,
            "The variables parameter is not JSON (\(why)): give a JSON object of the operation's variables, "
                + "URL-encoded.")
    }

    static func requestLineTooLong(_ limit: Int) -> ServerError {
        ServerError(
            414, "The request line is longer than \(limit) bytes: send the query by POST, as a JSON body.")
    }

    static func headTooLarge(_ limit: Int) -> ServerError {
        ServerError(
            431, "The request's header fields are larger than \(limit) bytes in all: send fewer or shorter ones.")
    }
}

extension ServerError {
    static func tokenRevoked() -> ServerError {
        ServerError(401, "The token was revoked (its user logged out, or an admin ended it): log in again.")
    }

    static func tokenWithoutId() -> ServerError {
        ServerError(
            400,
            "This token was issued by an earlier release and cannot be revoked by itself: a new password "
                + "(PUT /auth/password, or `realm-adapter user passwd`) ends it.")
    }

    static func adminTokenExists(_ name: String) -> ServerError {
        ServerError(409, "An admin token named '\(name)' exists already: revoke it first, or choose another name.")
    }

    static func adminTokenRevoked() -> ServerError {
        ServerError(401, "The admin token was revoked (`realm-adapter user admin-token revoke`).")
    }

    static func providerOff(_ provider: String, setting: String) -> ServerError {
        ServerError(
            403, "Provider \(provider) is off on this server: its operator turns it on with server.\(setting): true.")
    }

    static func emailNotConfirmed() -> ServerError {
        ServerError(
            403,
            "Confirm your email address first (server.requireEmailConfirmation): follow the link mailed to you, "
                + "or ask for a new one (POST /auth/password/updateAccount, action request_email_confirmation).")
    }

    static func notYours(_ what: String) -> ServerError {
        ServerError(403, "Only its user or an admin may \(what).")
    }

    static func adminsOnly(_ what: String) -> ServerError {
        ServerError(403, "Only admins may \(what).")
    }
}

extension ServerError {
    static func accountTokenUnknown(_ purpose: UserDirectory.AccountTokenPurpose) -> ServerError {
        ServerError(400, "This \(purpose.noun) link is not valid (mistyped or cut?): ask for a new one.")
    }

    static func accountTokenUsed(_ purpose: UserDirectory.AccountTokenPurpose) -> ServerError {
        ServerError(
            400,
            "This \(purpose.noun) link was used already"
                + (purpose == .passwordReset ? " (or a newer password ended it)" : "")
                + "; each works once: ask for a new one.")
    }

    static func accountTokenExpired(_ purpose: UserDirectory.AccountTokenPurpose) -> ServerError {
        ServerError(400, "This \(purpose.noun) link has expired: ask for a new one.")
    }
}

extension UserDirectory.AccountTokenPurpose {
    var noun: String { self == .passwordReset ? "password reset" : "confirmation" }
}

extension ServerError {
    static func mailOff() -> ServerError {
        ServerError(
            404,
            "This server sends no mail (server.email is not set): ask its operator to reset your password "
                + "(`realm-adapter user passwd`).")
    }

    static func noPassword(_ user: User) -> ServerError {
        ServerError(
            400,
            "'\(user.name)' logs in with provider \(user.provider) and has no password here"
                + (user.provider == "jwt" ? ": their auth service vouches for them." : "."))
    }

    static func noHomeDirectory() -> ServerError {
        ServerError(400, "An admin token has no directory of its own (/~/): name the Realm by its path.")
    }

    static func noSuchUserId(_ id: String) -> ServerError { ServerError(404, "There is no user with id '\(id)'.") }

    static func noUserOfPersonalRole(_ role: String) -> ServerError {
        ServerError(400, "There is no user with the id of \(role.prefix(100)): a personal role is __User:<user id>.")
    }
}

extension ServerError {
    static func noSuchOffer() -> ServerError {
        ServerError(404, "There is no such permission offer (check the token: it is 64 hexadecimal digits).")
    }

    static func offerWithdrawn() -> ServerError {
        ServerError(410, "This permission offer was withdrawn by its creator: ask them for a new one.")
    }

    static func offerExpired(_ at: Date) -> ServerError {
        ServerError(410, "This permission offer expired at \(Timestamp(at).iso8601): ask its creator for a new one.")
    }

    static func offerCreatorLostAccess(_ path: String) -> ServerError {
        ServerError(
            403, "The creator of this offer no longer manages \(path) at the level offered: ask them for a new one.")
    }
}
