/// A SQLSTATE: the five-character code standard SQL gives each error condition (`23505`, a
/// unique violation). Its first two characters are its class (`08`: connection exception).
///
/// Codes are compared by name, not by literal: `error.sqlState == .uniqueViolation`.
public struct SQLState: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { rawValue }

    /// The class: the first two characters.
    public var errorClass: String { String(rawValue.prefix(2)) }

    /// Class 08: the connection failed or broke.
    public var isConnectionException: Bool { errorClass == "08" }

    public static let uniqueViolation: SQLState = "23505"
    public static let foreignKeyViolation: SQLState = "23503"
    public static let notNullViolation: SQLState = "23502"
    public static let checkViolation: SQLState = "23514"
    public static let serializationFailure: SQLState = "40001"
    public static let deadlockDetected: SQLState = "40P01"
    public static let undefinedTable: SQLState = "42P01"
    public static let undefinedColumn: SQLState = "42703"
    /// A named object (Postgres: a replication slot) does not exist.
    public static let undefinedObject: SQLState = "42704"
    /// An object (Postgres: a replication slot) is in use by another session.
    public static let objectInUse: SQLState = "55006"
    /// The server is shutting down (a fast or smart shutdown).
    public static let adminShutdown: SQLState = "57P01"
    public static let crashShutdown: SQLState = "57P02"
    /// The server is starting up or in recovery.
    public static let cannotConnectNow: SQLState = "57P03"
}
