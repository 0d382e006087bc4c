import RealmAdapter

/// The one error type of Postgres connections: the connector's and the store's.
///
/// Carries the server's own fields (SQLSTATE, detail, hint) and the SQL text, never bound
/// values or the password. `description` is the form for users and logs: the server's message,
/// SQLSTATE and hint. The server's DETAIL often quotes row values (`Key (id)=(42) already
/// exists`, `Failing row contains (…)`), so only `debugDescription` has it, with the SQL: the
/// daemon logs that form at debug level only. Errors are built by factories:
/// `PostgresError+Wire.swift` here, the connector's in its `PostgresError+Factories.swift`.
public struct PostgresError: ConnectorError, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server could not be reached or refused the connection.
        public static let connectionFailed = Code("connectionFailed")
        /// The server rejected a statement.
        public static let queryFailed = Code("queryFailed")
        /// The connection broke while in use.
        public static let connectionLost = Code("connectionLost")
        /// The replication slot is missing, in use, or invalid.
        public static let replicationSlot = Code("replicationSlot")
        /// A replication message could not be decoded.
        public static let protocolError = Code("protocolError")
        /// The database does not match the mapping (missing table, column, wrong type).
        public static let schemaMismatch = Code("schemaMismatch")
    }

    public var code: Code
    /// What happened and what to do.
    public var message: String
    /// The SQLSTATE, when the server sent one (``SQLState/uniqueViolation``).
    public var sqlState: SQLState?
    public var detail: String?
    public var hint: String?
    /// The statement's text (parameters are `$1`, `$2`: their values are never kept).
    public var query: String?
    /// The error this one reports, when it reports another (the server's, for a missing slot).
    public var underlying: (any Error)?

    public init(
        _ code: Code, _ message: String, sqlState: SQLState? = nil, detail: String? = nil, hint: String? = nil,
        query: String? = nil
    ) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.query = query
    }

    public var description: String {
        var s = message
        if let sqlState { s += " (SQLSTATE \(sqlState))" }
        if let hint { s += " Hint: \(hint)" }
        return s
    }

    /// ``description`` with the server's DETAIL (which may quote row values) and the SQL.
    public var debugDescription: String {
        description + (detail.map { " Detail: \($0)" } ?? "") + (query.map { " Query: \($0)" } ?? "")
    }

    /// Whether retrying on a new connection can help (the connection broke, the server is
    /// starting or shutting down), as opposed to an error in the data or the SQL.
    public var isTransient: Bool {
        if code == .connectionFailed || code == .connectionLost { return true }
        guard let s = sqlState else { return false }
        return s.isConnectionException
            || [.adminShutdown, .crashShutdown, .cannotConnectNow, .serializationFailure, .deadlockDetected].contains(s)
    }
}
