/// Errors of the configuration file, JSON documents and command-line choices; each names the
/// JSON path (or the option) to fix.
extension RealmAdapterError {
    /// A JSON document's member at `path` is malformed.
    static func atJSONPath(_ path: String, _ message: String, code: Code = .invalidConfiguration)
        -> RealmAdapterError
    {
        RealmAdapterError(code, "\(path): \(message)", context: ["json.path": path])
    }

    /// The configuration file cannot be read.
    static func configurationUnreadable(_ file: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "Cannot read the configuration file '\(file)'. Check the path; "
                + "`realm-adapter validate --help` shows an example.",
            context: ["file": file])
    }

    /// A `pathRegex` that is not a regular expression.
    static func invalidPathRegex(_ pattern: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration, "The Realm path filter '\(pattern)' is not a valid regular expression.",
            context: ["pathRegex": pattern])
    }

    /// An adapter registered without a name.
    static func emptyAdapterName() -> RealmAdapterError {
        RealmAdapterError(.invalidConfiguration, "An adapter needs a non-empty name.")
    }

    /// A configuration whose schema has no types and does not take them from the Realms.
    static func nothingToSync() -> RealmAdapterError {
        atJSONPath(
            "schema",
            "has no object types, so nothing would sync. List the types to sync, or set "
                + "database.applyRealmSchemaChanges to take them from the Realms.")
    }

    /// A `realm.pathRegex` that does not match the literal `realm.path`.
    static func pathRegexMismatch(_ regex: String, path: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "realm.pathRegex '\(regex)' does not match realm.path '\(path)', so no change would ever sync. "
                + "Fix one of them, or leave pathRegex out to derive it from the path.",
            context: ["json.path": "realm.pathRegex"])
    }

    /// A configured feature (`what`) that the database's connector does not offer.
    static func unavailable(_ what: String, for source: String) -> RealmAdapterError {
        RealmAdapterError(.invalidConfiguration, "\(what) is not available for \(source).", context: ["source": source])
    }

    /// `--tables` names that are neither mapped tables nor types.
    static func unknownTables(_ unknown: [String], mapped: [String]) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "--tables names \(unknown.joined(separator: ", ")), which the configuration does not map; "
                + "mapped tables: \(mapped.joined(separator: ", ")).")
    }
}
