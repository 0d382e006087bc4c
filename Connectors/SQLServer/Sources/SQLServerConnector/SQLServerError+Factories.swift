/// The SQL Server connector's errors, one factory each.
extension SQLServerError {
    /// The login failed; `reasons` are what db-lib and the server said.
    /// - Parameter hints: what else may be wrong, from the settings (``SQLServerSettings/loginHints``).
    static func cannotConnect(_ target: String, _ diagnostics: Diagnostics, hints: [String] = []) -> SQLServerError {
        var e = SQLServerError(
            .connectionFailed,
            "Cannot connect to SQL Server at \(target): \(diagnostics.summary(or: "no reason given")). "
                + "Check database.host/port (or instance), user and password, and that the server accepts TCP/IP."
                + hints.map { " " + $0 }.joined())
        e.attach(diagnostics)
        return e
    }

    /// A statement failed (`lost`: the connection broke under it).
    static func statementFailed(_ diagnostics: Diagnostics, lost: Bool, query: String) -> SQLServerError {
        var e = SQLServerError(
            lost ? .connectionLost : .queryFailed, diagnostics.summary(or: "The statement failed."))
        e.attach(diagnostics)
        e.query = query
        return e
    }

    /// A connection used after it was closed.
    static func closed() -> SQLServerError {
        SQLServerError(.connectionLost, "The connection to SQL Server is closed.")
    }

    /// A setting that cannot reach a server as written (`member` is its JSON name).
    static func invalidSetting(_ member: String, _ why: String) -> SQLServerError {
        SQLServerError(.invalidSettings, "database.\(member): \(why)")
    }

    /// A value with no form a statement can carry.
    static func unsupportedValue(_ kind: String) -> SQLServerError {
        SQLServerError(.queryFailed, "A \(kind) value cannot be sent to SQL Server.")
    }

    /// Another daemon holds this tracking name's lock.
    static func daemonRunning(_ name: String, lock: String) -> SQLServerError {
        SQLServerError(
            .invalidSettings,
            "Another realm-adapter daemon is running with trackingName \(name) on this database (it holds the "
                + "application lock \(lock)). Stop it before starting this one.")
    }

    /// The database does not match the mapping.
    static func mismatch(_ problems: [String]) -> SQLServerError {
        SQLServerError(
            .invalidSettings, "The database does not match the mapping:\n  - " + problems.joined(separator: "\n  - "))
    }

    /// The database lacks change tracking or snapshot isolation; each problem says the fix.
    static func setup(_ problems: [String]) -> SQLServerError {
        SQLServerError(
            .invalidSettings,
            "The database is not ready to be followed:\n  - " + problems.joined(separator: "\n  - ")
                + "\n(A login that is not a sysadmin needs the GRANTs that `realm-adapter status` lists.)")
    }

    /// `database.createDatabase` without a database to create.
    static func needsDatabaseName() -> SQLServerError {
        SQLServerError(
            .invalidSettings,
            "database.createDatabase needs the database's name (database.database, or the URL's path).")
    }

    /// A dry run was asked to write.
    static func dryRun() -> SQLServerError { SQLServerError(.invalidSettings, "A dry run writes nothing.") }

    /// The stream was asked for before ``SQLServerConnector/prepare(_:)``.
    static func notPrepared() -> SQLServerError {
        SQLServerError(.invalidSettings, "The sqlserver connector streams changes only after prepare(_:).")
    }

    private mutating func attach(_ d: Diagnostics) {
        serverMessages = d.messages.reversed()
        libraryErrors = d.errors
    }
}

/// What db-lib's handlers reported during one call: its own errors and the server's messages
/// of severity 11 and more (lower ones are informational: "Changed database context").
struct Diagnostics: Sendable {
    var errors: [SQLServerError.LibraryError] = []
    var messages: [SQLServerError.ServerMessage] = []

    var isEmpty: Bool { errors.isEmpty && messages.isEmpty }

    /// The server's last message, else db-lib's errors, else `fallback`. db-lib's 20018
    /// ("check messages from the server") says nothing the message does not.
    func summary(or fallback: String) -> String {
        if let m = messages.last { return m.text }
        let own = errors.filter { $0.number != 20018 }.map { e in
            e.text + (e.osError.map { " (\(Self.osText($0)))" } ?? "")
        }
        return own.isEmpty ? fallback : own.joined(separator: "; ")
    }

    private static func osText(_ code: Int) -> String {
        switch code {
        case 111: "connection refused"
        case 110: "timed out"
        case 113: "no route to host"
        case 115: "timed out"
        default: "errno \(code)"
        }
    }
}
