import RealmAdapter

/// The one error type of the SQL Server connector.
///
/// Carries what the server said (message number, severity, state, line, procedure) or what
/// db-lib said (its error number and the operating system's), and the statement's text, never
/// bound values or the password. Built by the factories in `SQLServerError+Factories.swift`.
public struct SQLServerError: ConnectorError, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server could not be reached, or refused the login.
        public static let connectionFailed = Code("connectionFailed")
        /// The server rejected a statement.
        public static let queryFailed = Code("queryFailed")
        /// The connection broke while in use, or a statement timed out.
        public static let connectionLost = Code("connectionLost")
        /// The configuration cannot reach a server as written.
        public static let invalidSettings = Code("invalidSettings")
    }

    /// A message from the server (`RAISERROR`, a failed statement).
    public struct ServerMessage: Sendable, Hashable {
        public var number: Int
        public var severity: Int
        public var state: Int
        public var line: Int
        public var procedure: String?
        public var text: String
    }

    /// An error of db-lib itself (`SYBECONN` 20009 for a refused connection, …).
    public struct LibraryError: Sendable, Hashable {
        public var number: Int
        public var severity: Int
        /// The operating system's `errno`, when there is one (111: connection refused).
        public var osError: Int?
        public var text: String
    }

    public var code: Code
    /// What happened and what to do.
    public var message: String
    /// What the server said, last first (the one that failed the statement).
    public var serverMessages: [ServerMessage] = []
    /// What db-lib said, in order.
    public var libraryErrors: [LibraryError] = []
    /// The statement's text (parameters are `@p1`, `@p2`: their values are never kept).
    public var query: String?

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `SET LOCK_TIMEOUT` ran out: SQL Server's 1222, Babelfish's "canceling statement due to lock timeout".
    var isLockTimeout: Bool {
        number == 1222 || serverMessages.contains { $0.text.contains("lock timeout") }
    }

    /// The number of the server's message that failed the statement (2627: a duplicate key).
    public var number: Int? { serverMessages.first?.number }

    public var description: String {
        guard let m = serverMessages.first else { return message }
        return message + " (SQL Server error \(m.number), severity \(m.severity), state \(m.state), line \(m.line))"
    }

    /// ``description`` with the statement's text, for debug logs.
    public var debugDescription: String { description + (query.map { " Query: \($0)" } ?? "") }

    /// Whether retrying on a new connection can help: the connection broke or timed out, the
    /// statement was chosen as a deadlock victim (1205) or waited out a lock (1222).
    public var isTransient: Bool {
        code == .connectionFailed || code == .connectionLost || [1205, 1222].contains(number ?? 0)
    }
}
