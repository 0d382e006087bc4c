/// What a Studio page cannot show, as the page that says so.
enum StudioError: Error {
    /// No session, or one that no longer holds: the login page, with why when there is a reason.
    case loggedOut(String?)
    /// A form sent without this session's CSRF token.
    case forgedRequest

    static func notAllowed(_ path: String) -> ServerError {
        ServerError(403, "You may not read the Realm at \(path): ask an admin for read permission.")
    }

    static func noType(_ type: String, _ path: String) -> ServerError {
        ServerError(404, "The Realm at \(path) has no type \(type).")
    }

    static func noObject(_ type: String, _ key: String) -> ServerError {
        ServerError(404, "There is no \(type) with key \(key) (or you may not read it).")
    }

    static func badKey(_ key: String) -> ServerError {
        ServerError(400, "The key \(key) is not a JSON value (a number, or a string in double quotes).")
    }

    static func missing(_ parameter: String) -> ServerError {
        ServerError(400, "The request has no \(parameter): follow a link from Studio's pages.")
    }
}
