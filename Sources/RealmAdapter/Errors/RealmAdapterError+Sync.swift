/// Errors of the sync services, the loader and adapters: states that an operation cannot start
/// from, each saying which command gets out of it.
extension RealmAdapterError {
    /// An adapter whose cursor is behind history that was compacted before it registered.
    static func adapterBehindCompaction(adapter: String, path: String, cursor: Int64, compactedThrough: Int64)
        -> RealmAdapterError
    {
        RealmAdapterError(
            .historyCompacted,
            "Adapter '\(adapter)' is at version \(cursor) of \(path), but history up to \(compactedThrough) was "
                + "compacted before it registered. Follow this Realm with a new adapter name from the start, "
                + "or load it again.",
            context: ["adapter": adapter, "realm.path": path])
    }

    /// A load that started and did not finish (`state` is its recorded state).
    static func loadIncomplete(source: String, state: String) -> RealmAdapterError {
        RealmAdapterError(
            .loadIncomplete,
            "A load into this store did not finish (\(state)). Run `realm-adapter load` again to complete it, "
                + "then start the daemon.",
            context: ["source": source])
    }

    /// Realms with transactions not yet sent to the database, which a load would overwrite.
    static func unsentChanges(_ paths: [String]) -> RealmAdapterError {
        let shown = paths.prefix(10).joined(separator: ", ") + (paths.count > 10 ? ", …" : "")
        return RealmAdapterError(
            .invalidState,
            "These Realms have changes the database does not have yet: \(shown). Run `realm-adapter run` until "
                + "`realm-adapter status` shows no lag (if it shows one blocked, move it aside with "
                + "`realm-adapter dead-letter`), then load again.")
    }

    /// A connector's snapshot row that lacks a column the load asked for.
    static func fieldMissing(table: String, column: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState, "Table \(table): the connector gave no field for column \(column).",
            context: ["db.table": table, "db.column": column])
    }

    /// This error, of a database row the change stream replays as committed.
    func replayed() -> RealmAdapterError {
        var copy = self
        // A message ends with its sentence's stop, whatever made it.
        if let last = copy.message.last, !".!?".contains(last) { copy.message += "." }
        copy.message +=
            " The change stream replays it as it was committed, so fixing the row does not help: "
            + "set ignoreSQLErrors to true to set such rows aside (table realm_adapter_dead_row) and go on."
        return copy
    }
}

extension RealmAdapterError {
    /// `teardown` for a connector that does not say what it created in its database.
    static func teardownNotWritten() -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "This database type's connector does not list what it created, so `teardown` cannot remove it; "
                + "see its documentation for the objects to drop by hand.")
    }
}
