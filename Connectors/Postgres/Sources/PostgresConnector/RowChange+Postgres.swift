import RealmAdapter

/// A committed Postgres transaction, decoded: its position, its origin, and its row changes.
public struct PostgresTransaction: Sendable {
    /// The commit's end LSN: once the Realm holds this transaction, the slot may move here.
    public var endLSN: LSN
    public var commitLSN: LSN
    /// The replication origin of the session that wrote it (`realm_adapter` for our own writes).
    public var origin: String?
    public var changes: [RowChange]
    /// Transactional logical decoding messages (`pg_logical_emit_message`) with realm-adapter's prefix.
    public var messages: [[UInt8]] = []
    /// Which part of a large transaction this is (0 for the first; a transaction that was not
    /// split is its own part 0).
    public var part: Int = 0
    /// Whether this is the transaction's last part (its commit): only then may the slot move past it.
    public var isComplete = true
    /// When it committed, in microseconds since 2000-01-01 UTC (pgoutput's BEGIN says).
    public var commitTime: Int64 = 0
    /// Its transaction id (pgoutput's BEGIN says; 32 bits, without the epoch).
    public var xid: UInt32 = 0
    /// Columns to read back from the database by table (mapped columns the stream did not
    /// carry: renamed or dropped while it ran, ``PostgresReplicationStream/adjustRelation``).
    public var readBack: [String: [String]] = [:]
}
