/// The one error type of the core library.
///
/// Every error says what went wrong, where (Realm path, type, property, instruction index,
/// JSON path, …) and, where a user can act, what to do. Bound values and secrets are never
/// part of a message: a conversion error names the value's *kind*, not the value.
///
/// Errors are built by named factories (`RealmAdapterError+Values.swift`, `+Schema`, `+Objects`,
/// `+Store`, `+Mapping`), so one failure reads the same wherever it happens; an error that reports
/// another (SQLite's, the file system's, a connector's) keeps it as ``underlying``.
public struct RealmAdapterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category, so callers can branch without parsing messages.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A schema definition (Realm JS model syntax) is malformed or inconsistent.
        public static let invalidSchema = Code("invalidSchema")
        /// A Realm path is malformed (`..`, empty segments, not absolute).
        public static let invalidPath = Code("invalidPath")
        /// A transaction breaks the Realm's schema; nothing was applied.
        public static let schemaViolation = Code("schemaViolation")
        /// A value does not fit the property it is written to; nothing was applied.
        public static let invalidValue = Code("invalidValue")
        /// An object was not found (SET, DELETE, list edits on a missing object).
        public static let objectNotFound = Code("objectNotFound")
        /// INSERT of a primary key that already exists.
        public static let duplicatePrimaryKey = Code("duplicatePrimaryKey")
        /// A list index is out of range.
        public static let listIndexOutOfRange = Code("listIndexOutOfRange")
        /// The Realm does not exist in the store.
        public static let realmNotFound = Code("realmNotFound")
        /// Instruction JSON is malformed.
        public static let invalidInstruction = Code("invalidInstruction")
        /// The configuration file is malformed; the message names the JSON path.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// History before the asked-for version was compacted away.
        public static let historyCompacted = Code("historyCompacted")
        /// The store's files could not be opened or are not a realm-adapter store.
        public static let storeUnavailable = Code("storeUnavailable")
        /// A load into the store started and did not finish; run it again.
        public static let loadIncomplete = Code("loadIncomplete")
        /// The store or database is in a state the operation cannot start from; the message says why.
        public static let invalidState = Code("invalidState")
        /// A foreign key (or link-table row) refers to a row the database does not have.
        public static let danglingForeignKey = Code("danglingForeignKey")
        /// A webhook endpoint did not take a change event (no answer, or not a 2xx); retried.
        public static let webhookFailed = Code("webhookFailed")
        /// The Realm's fine-grained permissions do not allow what was asked; nothing was written.
        public static let permissionDenied = Code("permissionDenied")
        /// A test made a failpoint fail (debug builds only; see ``Failpoint``).
        public static let failpoint = Code("failpoint")
    }

    public var code: Code
    /// What happened and what to do, ready to show to a user.
    public var message: String
    /// Where it happened, e.g. `["realm.path": "/a", "instruction": "3 (SET Task)"]`.
    public var context: [String: String]
    /// The error this one reports, when it reports another (a SQLite or file system error).
    public var underlying: (any Error)?

    public init(
        _ code: Code, _ message: String, context: [String: String] = [:], underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.context = context
        self.underlying = underlying
    }

    /// Errors are equal when they say the same; the underlying errors are compared by their text.
    public static func == (a: RealmAdapterError, b: RealmAdapterError) -> Bool {
        a.code == b.code && a.message == b.message && a.context == b.context
            && a.underlying.map { "\($0)" } == b.underlying.map { "\($0)" }
    }

    public var description: String {
        guard !context.isEmpty else { return message }
        let place = context.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        return "\(message) [\(place)]"
    }

    /// A copy with more context (keys already present are kept).
    public func adding(_ more: [String: String]) -> RealmAdapterError {
        var copy = self
        copy.context.merge(more) { old, _ in old }
        return copy
    }
}

extension RealmAdapterError {
    /// A failpoint configured with `error` was hit (debug builds only).
    static func failpoint(_ name: String) -> RealmAdapterError {
        RealmAdapterError(
            .failpoint, "Failpoint \(name) failed, as \(Failpoint.environmentVariable) asked.",
            context: ["failpoint": name])
    }
}
