/// A committed database transaction, as a relational connector's change stream delivers it.
public struct DatabaseTransaction: Sendable {
    /// Where the stream resumes after this transaction. Positions of one source must sort as
    /// strings in commit order (Postgres: the LSN as 16 hexadecimal digits).
    public var position: String
    /// Whether the adapter itself wrote it (through ``RelationalConnector/apply(_:adapter:path:version:)``).
    public var isOwn: Bool
    public var changes: [RowChange]
    /// The connector's handle, passed back in ``RelationalConnector/processed(_:)``.
    public var token: UInt64
    /// For own transactions: the (adapter, path, version) markers they recorded, i.e. which
    /// Realm versions the database holds as of this transaction.
    public var markers: [AppliedMarker]
    /// For own transactions: rows that one of its updates or deletes did not find (see
    /// ``RelationalConnector/apply(_:adapter:path:version:)``), to be read again.
    public var missedRows: [RowReference]
    /// Per table, columns the change stream does not carry (Postgres: generated columns):
    /// read back from the database (``RelationalConnector/row(_:key:columns:)``) for each
    /// inserted or updated row.
    public var readBack: [String: [String]]
    /// When the database committed it, if the stream says (metrics: how far behind sync is).
    public var commitTime: Timestamp?
    /// Whether it is one part of a larger database transaction that the connector splits so as
    /// never to hold it whole (Postgres: `database.largeTransactionChanges`): it is applied as it
    /// comes, never together with other transactions (which the daemon does when it is behind).
    public var isPart: Bool

    public init(
        position: String, isOwn: Bool, changes: [RowChange], token: UInt64, markers: [AppliedMarker] = [],
        missedRows: [RowReference] = [], readBack: [String: [String]] = [:], commitTime: Timestamp? = nil,
        isPart: Bool = false
    ) {
        self.commitTime = commitTime
        self.isPart = isPart
        self.position = position
        self.isOwn = isOwn
        self.changes = changes
        self.token = token
        self.markers = markers
        self.missedRows = missedRows
        self.readBack = readBack
    }
}

/// A row named by its table and key columns.
public struct RowReference: Hashable, Sendable {
    public var table: String
    public var key: DatabaseRow

    public init(table: String, key: DatabaseRow) {
        self.table = table
        self.key = key
    }

    /// As JSON, `{"table": …, "key": {column: value}}` (values untyped, as JSON carries them).
    public var json: JSONValue {
        .object([
            .init("table", .string(table)),
            .init("key", .object(key.values.sorted { $0.key < $1.key }.map { .init($0.key, $0.value.json) })),
        ])
    }

    public init?(json: JSONValue) {
        guard case .string(let table)? = json["table"], case .object(let key)? = json["key"],
            let values = try? key.map({ ($0.key, try Value(json: $0.value)) })
        else { return nil }
        self.init(table: table, key: DatabaseRow(Dictionary(values, uniquingKeysWith: { a, _ in a })))
    }
}

/// A database row change that no Realm can hold (a value that does not convert, a routing
/// column that makes no path), set aside under `ignoreSQLErrors` so that sync goes on.
public struct SetAsideRow: Sendable {
    public var table: String
    /// The change as JSON: `{"change": "insert", "row": {column: value}}` (values included).
    public var change: JSONValue
    /// Why, naming table, column and key.
    public var error: String
    /// The position of the database transaction it came in (of the last one applied with it,
    /// when transactions that arrived together were applied as one).
    public var position: String

    public init(_ change: RowChange, error: RealmAdapterError, position: String) {
        let (kind, row): (String, DatabaseRow?) =
            switch change {
            case .insert(_, let r): ("insert", r)
            case .update(_, let r, _): ("update", r)
            case .delete(_, let k): ("delete", k)
            case .truncate: ("truncate", nil)
            }
        table = change.tables.joined(separator: ",")
        let values = row.map { r in
            JSONValue.object(r.values.sorted { $0.key < $1.key }.map { .init($0.key, $0.value.json) })
        }
        self.change = .object([.init("change", .string(kind)), .init("row", values ?? .null)])
        self.error = error.message
        self.position = position
    }
}

/// Where a connector's change stream starts (``RelationalConnector/prepare(_:)``).
public enum StreamStart: Sendable {
    /// From where it was (Postgres: the replication slot existed).
    case resumed
    /// From now: its starting point was created by this start.
    case created
    /// From now, as configured (Postgres: `resetReplicationSlot`): the starting point was
    /// dropped and created again, so changes made meanwhile are not in the Realms.
    case restarted
}

/// A Realm transaction recorded as applied to the database.
public struct AppliedMarker: Hashable, Sendable {
    public var adapter: String
    public var path: String
    public var version: Int64
    public init(adapter: String, path: String, version: Int64) {
        self.adapter = adapter
        self.path = path
        self.version = version
    }
}

/// What a relational database connector provides (ARCHITECTURE.md: Layers); the core does the rest: mapping,
/// exactly-once bookkeeping, echo suppression, retries.
///
/// A connector owns only its wire and its dialect. Its writes must be tagged so that its own
/// change stream reports them as ``DatabaseTransaction/isOwn``, and each `apply` must record
/// (adapter, path, version) in the database in the same database transaction.
public protocol RelationalConnector: Sendable {
    /// A name for positions and logs (`postgres`).
    var sourceName: String { get }

    /// Takes the daemon's lock (one daemon per stream: a second one fails here, clearly),
    /// prepares the database (state table, publication, slot, …) and checks that it matches
    /// the mapping; throws naming each mismatch. Says whether the stream's starting point
    /// existed before or was created now.
    @discardableResult
    func prepare(_ mapping: Mapping) async throws -> StreamStart

    /// The Realm versions already applied to the database, per path, for `adapter`.
    func appliedVersions(adapter: String) async throws -> [String: Int64]

    /// Applies `writes` in one database transaction together with the marker (adapter, path,
    /// version). Throws the database's error if any write fails; nothing is then applied.
    ///
    /// What ``DatabaseWrite/missedRow(affected:)`` names is reported back through the change
    /// stream (``DatabaseTransaction/missedRows``): another transaction may have inserted a row
    /// after a statement began and committed first, so the database does not hold the Realm's
    /// write although it comes later in the commit order.
    func apply(_ writes: [DatabaseWrite], adapter: String, path: String, version: Int64) async throws

    /// Keeps a change that the database rejected, with the reason (for `ignoreSQLErrors`), and
    /// records (adapter, path, version) as done.
    func deadLetter(_ instructions: [Instruction], error: String, adapter: String, path: String, version: Int64)
        async throws

    /// Committed transactions from the database, oldest first, starting after what was
    /// reported processed before (across restarts). Own transactions carry their markers
    /// (the connector streams its state table for that).
    func changes() async throws -> AsyncThrowingStream<DatabaseTransaction, Error>

    /// Reports a transaction as safely in the Realm; the stream may then move past it for good.
    func processed(_ transaction: DatabaseTransaction)

    /// A list of links as the database holds it now: the targets in the link table's rows for
    /// `owner`, in index order. Blocking; called from a thread of the caller's own.
    func linkList(_ list: LinkListMapping, owner: Value) throws -> [Value]

    /// `columns` of the row of `table` with the given key columns, as the database holds it
    /// now, or nil if there is none. Blocking; called from a thread of the caller's own.
    func row(_ table: String, key: DatabaseRow, columns: [String]) throws -> DatabaseRow?

    /// Writes RealmIds generated for rows the database created without one
    /// (`databasePrimaryKey`) into those rows, where they are still empty, in one database
    /// transaction that the change stream reports as own. Blocking; called from a thread of
    /// the caller's own.
    func writeRealmIds(_ assignments: [RealmIdAssignment]) throws

    /// Keeps row changes that no Realm can hold (`ignoreSQLErrors`), with the reason, in the
    /// database; called before the Realm commit of their transaction (a replay after a crash may
    /// keep them twice, never lose them). Blocking; called from a thread of the caller's own.
    func setAside(_ rows: [SetAsideRow]) throws

    /// Brings the database up to a mapping that grew with a Realm's schema
    /// (`database.applyRealmSchemaChanges`): creates missing tables, adds missing columns,
    /// and starts following the new tables. Must be idempotent.
    func applyRealmSchema(_ mapping: Mapping) async throws

    /// Whether an error is worth retrying on a new connection (network, server restart).
    func isTransient(_ error: Error) -> Bool

    /// Undoes a starting point that this process created (``StreamStart/created``) if its
    /// stream never started: a start that failed leaves nothing behind (Postgres: no slot
    /// retaining WAL), and nothing was read from it. Says whether there was one to undo.
    func abandonUnusedStart() async -> Bool

    /// Closes connections (the streams end).
    func shutdown() async
}

extension RelationalConnector {
    public func abandonUnusedStart() async -> Bool { false }

    public func setAside(_ rows: [SetAsideRow]) throws {
        throw RealmAdapterError.unavailable("ignoreSQLErrors (setting rows aside)", for: sourceName)
    }

    public func writeRealmIds(_ assignments: [RealmIdAssignment]) throws {
        throw RealmAdapterError.unavailable("databasePrimaryKey", for: sourceName)
    }

    public func applyRealmSchema(_ mapping: Mapping) async throws {
        throw RealmAdapterError.unavailable("database.applyRealmSchemaChanges", for: sourceName)
    }
}
