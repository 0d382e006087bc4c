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

    static func systemType(_ type: String) -> ServerError {
        ServerError(
            403,
            "\(type) belongs to the fine-grained permissions: change it with `realm-adapter role` and "
                + "`realm-adapter permission --privileges`.")
    }

    static func noKey(_ type: String) -> ServerError {
        ServerError(400, "\(type) has no primary key: Studio cannot name one of its objects to change it.")
    }

    static func restrictedHistory(_ path: String) -> ServerError {
        ServerError(
            403,
            "The history of \(path) holds objects its fine-grained permissions may hide from you: "
                + "only those who may read all of it (admins) see it.")
    }

    static func badKey(_ key: String) -> ServerError {
        ServerError(400, "The key \(key) is not a JSON value (a number, or a string in double quotes).")
    }

    static func missing(_ parameter: String) -> ServerError {
        ServerError(400, "The request has no \(parameter): follow a link from Studio's pages.")
    }
}

extension ServerError {
    static func tooManyStreams() -> ServerError {
        ServerError(
            429,
            "You follow too many pages at once (\(SubscriptionQuota.perUser), GraphQL subscriptions included): "
                + "close some Studio tabs.")
    }
}
