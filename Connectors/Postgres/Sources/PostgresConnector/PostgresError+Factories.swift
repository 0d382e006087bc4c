import CLibPQ
import Foundation
import RealmAdapter

/// The Postgres connector's errors, one factory each, so one failure reads the same wherever it
/// happens. An error that reports another (the server's own) keeps it as `underlying`.
extension PostgresError {
    /// The replication connection failed; `what` says doing what.
    static func replicationLost(_ what: String, _ conn: OpaquePointer?) -> PostgresError {
        PostgresError(.connectionLost, "\(what): \(libpqMessage(conn))")
    }

    static func streamEnded() -> PostgresError {
        PostgresError(.connectionLost, "The server ended the replication stream.")
    }

    static func needsDatabaseName() -> PostgresError {
        PostgresError(.queryFailed, "database.createDatabase needs the database name (database, or the URL's path).")
    }

    static func dryRunWritesNothing() -> PostgresError { PostgresError(.queryFailed, "A dry run writes nothing.") }

    // MARK: Replication slots

    static func slotMissing(_ slot: String, _ e: PostgresError) -> PostgresError {
        var error = PostgresError(
            .replicationSlot,
            "The replication slot \(slot) does not exist: it was dropped behind the adapter's back, so changes made "
                + "since may be lost. Run `realm-adapter load` again to start from a fresh snapshot "
                + "(it recreates the slot).",
            sqlState: e.sqlState, query: e.query)
        error.underlying = e
        return error
    }

    static func slotInUse(_ slot: String, _ e: PostgresError) -> PostgresError {
        var error = PostgresError(
            .replicationSlot,
            "The replication slot \(slot) is in use by another process. "
                + "Is another realm-adapter running with this configuration?",
            sqlState: e.sqlState, query: e.query)
        error.underlying = e
        return error
    }

    static func slotInUseByDaemon(_ slot: String) -> PostgresError {
        PostgresError(
            .replicationSlot,
            "The replication slot \(slot) is in use: stop `realm-adapter run` before loading "
                + "(a load sets where the daemon's stream starts).")
    }

    static func slotInUseByTeardown(_ slot: String) -> PostgresError {
        PostgresError(
            .replicationSlot,
            "The replication slot \(slot) is in use: stop `realm-adapter run` before removing what it created "
                + "(nothing was removed).")
    }

    static func daemonRunning(_ slot: String) -> PostgresError {
        PostgresError(
            .replicationSlot,
            "Another realm-adapter daemon is running with slot \(slot) (it holds the daemon lock). Stop it before "
                + "starting this one: two daemons on one slot would each miss what the other reads.")
    }

    static func slotOfOtherDatabase(_ slot: String, database: String?) -> PostgresError {
        PostgresError(
            .replicationSlot,
            "The replication slot \(slot) belongs to database \(database ?? "(none)"); slot names are shared by "
                + "the whole server. Set database.slotName to a name of its own.")
    }

    /// CREATE_REPLICATION_SLOT's answer lacks `what`.
    static func slotCreation(lacks what: String) -> PostgresError {
        PostgresError(.replicationSlot, "CREATE_REPLICATION_SLOT returned no \(what).")
    }

    // MARK: The database against the mapping

    static func mismatch(_ problems: [String]) -> PostgresError {
        PostgresError(
            .schemaMismatch, "The database does not match the mapping:\n  - " + problems.joined(separator: "\n  - "))
    }

    static func namesTooLong(_ names: [String]) -> PostgresError {
        let n = PostgresSQL.maxIdentifierBytes
        return PostgresError(
            .schemaMismatch,
            "Postgres cuts names to \(n) bytes, so these cannot be tables or columns as they are (names sharing "
                + "their first \(n) bytes would become one): " + names.joined(separator: "; ")
                + ". Nothing was created. Give them shorter names in the database with mapping.tables and "
                + "mapping.columns.")
    }

    static func tableMissing(_ schema: String, _ table: String) -> PostgresError {
        PostgresError(.schemaMismatch, "Table \(schema).\(table) does not exist.")
    }

    static func columnMissing(_ table: String, _ column: String) -> PostgresError {
        PostgresError(.schemaMismatch, "Column \(table).\(column) does not exist.")
    }

    static func unknownColumnType(_ table: String, _ column: String) -> PostgresError {
        PostgresError(
            .schemaMismatch,
            "Column \(table).\(column) has a type realm-adapter does not know; map it in mapping.customTypes.")
    }

    // MARK: Wire formats

    /// A COPY in binary format that does not parse; `what` says how.
    static func copyMalformed(_ what: String) -> PostgresError {
        PostgresError(.queryFailed, "COPY sent \(what).")
    }

    static func decoding(_ what: String) -> PostgresError {
        PostgresError(
            .protocolError,
            "A logical replication message could not be decoded (\(what)). "
                + "The server may speak a newer pgoutput protocol.")
    }

    /// A Realm's new object whose key a row of another Realm has (a per-user table: the row's
    /// routing columns differ): its write is refused as the database's refusal, never an update
    /// of the other user's row.
    static func rowOfAnotherRealm(table: String) -> PostgresError {
        PostgresError(
            .queryFailed,
            "Table \(table): a Realm created an object whose key a row of another Realm already has (its realm.path "
                + "columns differ); the write is refused rather than taking that row.",
            sqlState: .uniqueViolation)
    }
}
