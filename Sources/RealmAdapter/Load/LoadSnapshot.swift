/// One consistent read of the database for ``Loader``, from a relational connector: every
/// table as of the same moment, and where the connector's change stream starts after it.
///
/// Methods block; the loader calls them from threads of its own, one call at a time.
public protocol LoadSnapshot: AnyObject, Sendable {
    /// The source position where this snapshot ends: the daemon's change stream delivers
    /// exactly the transactions committed after it. Nil when the snapshot is not such a point
    /// (a reload of some tables while the stream keeps its place; it then replays changes
    /// since its own position over the loaded rows, which converges to the same state).
    var handOffPosition: String? { get }

    /// The table's row count as the database estimates it (planner statistics), or nil.
    func estimatedRows(_ table: String) throws -> Int?

    /// The table's row count as the database's planner estimates it from the table's size, for
    /// a table without statistics (never analyzed), or nil. The default is nil.
    func sizeEstimate(_ table: String) throws -> Int?

    /// How many distinct combinations of `columns` the table holds (the Realms a routed table
    /// fans out to).
    func distinctCount(_ table: String, columns: [String]) throws -> Int

    /// Streams every row of `table`: `body` gets the values of `columns`, in that order
    /// (`.null` for SQL NULL), rows sorted by `orderedBy` when it is not empty.
    /// Never holds the table in memory.
    func rows(_ table: String, columns: [String], orderedBy: [String], _ body: ([Value]) throws -> Void) throws

    /// Streams every row of `table` as ``rows(_:columns:orderedBy:_:)`` does, each field handed to
    /// `receiver` typed as it is read (the field methods, `at:` the column's position in
    /// `columns`), then ``FieldReceiver/endRow()``: a bulk load's fastest path, which makes no
    /// ``Value`` for most fields. The default hands over each row's values.
    func rows(_ table: String, columns: [String], orderedBy: [String], into receiver: FieldReceiver) throws

    /// Streams a link table's rows in `(oid, idx)` order: `body` gets the owner's key and the
    /// target, then `ownerColumns` of the owner's row (`.null` when the link table names an
    /// owner the table does not have).
    func linkRows(
        _ list: LinkListMapping, owner: TableMapping, ownerColumns: [String], _ body: ([Value]) throws -> Void) throws

    /// Writes RealmIds generated for rows without one into those rows, where they are still
    /// empty (`databasePrimaryKey`), outside the snapshot and so that the change stream does
    /// not bring them back (``RelationalConnector/writeRealmIds(_:)``).
    func writeRealmIds(_ assignments: [RealmIdAssignment]) throws

    /// Ends the read (the hand-off point stays where it is). Called once, also after errors.
    func finish() throws
}

extension LoadSnapshot {
    public func sizeEstimate(_ table: String) throws -> Int? { nil }

    public func rows(_ table: String, columns: [String], orderedBy: [String], into receiver: FieldReceiver) throws {
        try rows(table, columns: columns, orderedBy: orderedBy) { values in
            for (j, v) in values.enumerated() { try receiver.value(v, at: j) }
            try receiver.endRow()
        }
    }
}

/// A connector that can seed Realms: it opens the snapshot a load reads.
public protocol LoadableConnector: Sendable {
    /// The name positions are recorded under (as ``RelationalConnector/sourceName``).
    var sourceName: String { get }

    /// Prepares the database as the daemon would and opens a consistent snapshot whose end is
    /// the hand-off point; with `partial` (a subset of tables) an existing change stream may
    /// keep its place instead (no hand-off position then).
    func loadSnapshot(_ mapping: Mapping, partial: Bool) async throws -> LoadSnapshot
}

extension Loader {
    /// The whole load: refuses when a Realm has unsent changes, opens the connector's snapshot,
    /// loads the plan from it and closes it.
    public func load(
        from connector: some LoadableConnector, plan: LoadPlan, partial: Bool,
        progress: @escaping @Sendable (LoadProgress) -> Void = { _ in }
    ) async throws -> LoadSummary {
        try await store.perform { try self.requireNothingUnsent() }
        let snapshot = try await connector.loadSnapshot(mapping, partial: partial)
        do {
            let summary = try await store.perform { try self.load(snapshot, plan: plan, progress: progress) }
            try snapshot.finish()
            return summary
        } catch {
            try? snapshot.finish()
            throw error
        }
    }
}
