import RealmAdapter

/// The SQLite connector's errors. It reports them as ``RealmAdapterError``s, with the core's codes.
extension SQLiteConnector {
    static func daemonRunning(_ file: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "Another realm-adapter daemon (or load) works on \(file) (it holds \(file).realm-adapter.lock). "
                + "Stop it first.")
    }

    static func notPrepared() -> RealmAdapterError {
        RealmAdapterError(.invalidState, "The sqlite connector streams changes only after prepare(_:).")
    }

    /// A mapping feature this example connector leaves out (`what`: "sync lists of links").
    static func unsupported(_ what: String) -> RealmAdapterError {
        RealmAdapterError(.invalidConfiguration, "The sqlite connector does not \(what).")
    }

    /// A database URL that names no SQLite file; `problem` says how.
    static func badURL(_ problem: String) -> RealmAdapterError {
        RealmAdapterError(.invalidConfiguration, "\(problem): give the database as sqlite:///path/to/app.sqlite.")
    }

    /// A database file that does not exist (and is not to be created).
    static func fileMissing(_ file: String, createsIt: Bool) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "The SQLite database \(file) does not exist."
                + (createsIt ? " Check database.file, or set database.createDatabase to create it." : ""),
            context: ["json.path": "database.file"])
    }

    /// The problems that keep the mapping from syncing with this database.
    static func mismatch(_ problems: [String], heading: String, hint: String = "") -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration, "\(heading):\n  - " + problems.joined(separator: "\n  - ") + hint)
    }
}
