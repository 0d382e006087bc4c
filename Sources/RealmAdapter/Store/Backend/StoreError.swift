/// A failure of a store's database, in its backend's words (as GRDB's `DatabaseError` and
/// postgres-nio's `PSQLError`): what kind it is for core's decisions, the backend's own code
/// and its message. The message never holds a bound value.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable {
        /// A uniqueness or other constraint refused the statement: core may expect it (a key
        /// already there) and go on.
        case constraint
        /// Another writer held the store past the busy timeout.
        case busy
        /// The store's database could not be reached, or the connection to it broke (a server
        /// restarting): worth trying again later.
        case unreachable
        /// Anything else: a disk, connection or SQL failure.
        case failed
    }

    package var kind: Kind
    /// The backend's code: `sqlite <extended result code>` or `postgres <SQLSTATE>`.
    package var code: String
    package var message: String

    package init(_ kind: Kind, code: String, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    package var description: String { message }
    package var isConstraint: Bool { kind == .constraint }
}
