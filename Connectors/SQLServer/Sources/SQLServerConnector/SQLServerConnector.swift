import Foundation
import Logging
import RealmAdapter
import Synchronization

/// `database.type` `sqlserver`: change tracking in, context-tagged transactions out.
///
/// Database → Realm: ``ChangeTrackingPoller`` reads each mapped table's change tracking every
/// `pollIntervalMs`, one round per snapshot. The version the Realms hold is kept in
/// `realm_adapter_poller`, so a restart resumes there (the Realms skip by position what they
/// hold already).
///
/// Realm → database: each Realm transaction is one SQL transaction whose statements carry the
/// daemon's change-tracking context (``SQLServerWrites``) and which records its marker
/// (adapter, path, version) in `realm_adapter_state`. The poller brings rows with that context
/// back as own, compared with the Realm's by the core (triggers and defaults come back).
///
/// One daemon per `trackingName`: it holds an application lock (`sp_getapplock`) on a
/// connection of its own. Every connection runs its calls on its own queue (``SQLServerConnection``).
public final class SQLServerConnector: DatabaseConnector {
    public let configuration: DatabaseConfiguration
    let settings: SQLServerSettings
    let customTypes: [String: ScalarType]
    let logger: Logger

    struct State {
        var mapping: Mapping?
        var writer: SQLServerConnection?
        var reader: SQLServerConnection?
        var lock: SQLServerConnection?
        /// The poller's second connection under trigger capture (``SQLServerTriggerReader``).
        var gate: SQLServerConnection?
        /// Change tracking or triggers (``capture(_:)``), once known.
        var capture: ChangeCapture?
        /// Under trigger capture, per table, each column's declared type.
        var declaredTypes: [String: [String: String]] = [:]
        /// Per table, each column's type (`INFORMATION_SCHEMA.COLUMNS.DATA_TYPE`).
        var columnTypes: [String: [String: String]] = [:]
        /// The version the Realms hold (``processed(_:)``), and the one saved in the database.
        var confirmed: Int64 = 0
        var saved: Int64 = 0
        /// Per table, the column the database generates (`databasePrimaryKey`), from `mapping`.
        var generated: [String: String] {
            (mapping?.tables ?? []).reduce(into: [:]) { out, t in if let dk = t.databaseKey { out[t.table] = dk.column }
            }
        }
        /// ``prepare(_:)`` wrote the resume point (from now), and no stream read from it yet.
        var createdStart = false
        var streamStarted = false
        /// A full load prepares: it reads every table again, so a table without a capture
        /// trigger (new, or its trigger dropped) is no gap; it gets one.
        var fullLoad = false
    }
    let state = Mutex(State())

    public init(configuration: DatabaseConfiguration, customTypes: [String: ScalarType], logger: Logger) throws {
        self.configuration = configuration
        self.settings = try SQLServerSettings(configuration)
        self.customTypes = customTypes
        self.logger = logger
    }

    public var sourceName: String { "sqlserver:\(settings.displayTarget):\(options.trackingName)" }
    var options: SQLServerOptions { settings.options }
    var dialect: SQLServerDialect { SQLServerDialect(schema: configuration.schema) }
    var context: Data { SQLServerWrites.context(name: options.trackingName) }
    /// The application lock one daemon per `trackingName` holds: named by database too, as
    /// Babelfish's locks span every database of the server (SQL Server's are per database).
    var lockResource: String { String("realm-adapter:\(settings.database ?? ""):\(options.trackingName)".prefix(255)) }

    /// What every connection sets first: no row counts as messages, a failed statement rolls its
    /// transaction back, and the ANSI behaviours SQL Server's own tools use (db-lib's defaults differ).
    static let sessionSettings = """
        SET NOCOUNT ON; SET XACT_ABORT ON; SET ANSI_WARNINGS ON; SET ANSI_NULLS ON; SET ANSI_PADDING ON;
        SET QUOTED_IDENTIFIER ON; SET CONCAT_NULL_YIELDS_NULL ON; SET ARITHABORT ON;
        """

    /// A connection kept in `state` (opened on first use).
    func connection(_ slot: WritableKeyPath<State, SQLServerConnection?>) async throws -> SQLServerConnection {
        if let c = state.withLock({ $0[keyPath: slot] }) { return c }
        let c = try await SQLServerConnection.connect(settings, logger: logger)
        let setup = sessionSetup(slot)
        try await c.session { s in try s.execute(setup) }
        state.withLock { $0[keyPath: slot] = c }
        return c
    }

    func connectionSync(_ slot: WritableKeyPath<State, SQLServerConnection?>) throws -> SQLServerConnection {
        if let c = state.withLock({ $0[keyPath: slot] }) { return c }
        let c = try SQLServerConnection.connectSync(settings, logger: logger)
        try c.sessionSync { s in try s.execute(sessionSetup(slot)) }
        state.withLock { $0[keyPath: slot] = c }
        return c
    }

    /// ``sessionSettings``, and on the writer under trigger capture the tag of the daemon's writes.
    func sessionSetup(_ slot: WritableKeyPath<State, SQLServerConnection?>) -> String {
        guard slot == \State.writer, state.withLock({ $0.capture }) == .triggers else { return Self.sessionSettings }
        return Self.sessionSettings + "\n" + SQLServerTriggers.tagSession(context)
    }

    /// The state table as the poller follows it.
    static let stateTracked = TrackedTable(name: SQLServerSQL.stateTable, keyColumns: ["adapter", "path"])

    // MARK: Preparing

    @discardableResult
    public func prepare(_ mapping: Mapping) async throws -> StreamStart {
        try Self.check(mapping)
        if configuration.createDatabase { try await createDatabaseIfMissing() }  // the lock needs the database
        let lock = try await SQLServerConnection.connect(settings, logger: logger)
        let name = lockResource
        let granted = try await lock.session { s in
            try s.query(
                SQLStatement(
                    "DECLARE @r int; EXEC @r = sp_getapplock @Resource = @p1, @LockMode = 'Exclusive', "
                        + "@LockOwner = 'Session', @LockTimeout = 0; SELECT @r;", [.string(name)])
            ).rows.first?.first
        }
        guard case .int(let r)? = granted, r >= 0 else {
            lock.close()
            throw SQLServerError.daemonRunning(options.trackingName, lock: name)
        }
        state.withLock { $0.lock = lock }
        let capture = try await lock.session { s in try self.capture(s) }
        let c = try await connection(\.writer)
        let (d, schema, createSchema) = (dialect, configuration.schema, configuration.createSchema)
        let tracking = options.trackingName
        let (types, version) = try await c.session { s -> ([String: [String: String]], Int64?) in
            try s.execute(SQLServerSQL.createOwnTables(d))
            if capture == .triggers { try s.execute(SQLServerTriggers.createTables(d)) }
            if createSchema { try s.execute(SQLServerSchema.create(mapping, d)) }
            let types = try SQLServerSchema.columnTypes(s, schema: schema)
            let problems = SQLServerSchema.mismatches(mapping, types: types)
            guard problems.isEmpty else { throw SQLServerError.mismatch(problems) }
            let setup = try SQLServerSchema.setupState(s)
            let missing = SQLServerSetup.problems(
                setup, database: self.settings.database ?? "", schema: schema,
                tables: mapping.tables.map(\.table) + mapping.tables.flatMap(\.linkLists).map(\.table)
                    + [SQLServerSQL.stateTable], capture: capture)
            let fixable = missing.filter { !$0.hasPrefix("change tracking is off for table") }
            guard fixable.isEmpty else { throw SQLServerError.setup(fixable) }
            let row = try s.query(
                d.statement("SELECT version FROM \(table: SQLServerSQL.pollerTable) WHERE adapter = \(tracking)"))
            let version: Int64? = if case .int(let v)? = row.rows.first?.first { v } else { nil }
            try self.startCapture(s, mapping, resuming: version != nil && !self.state.withLock { $0.fullLoad })
            return (types, version)
        }
        state.withLock {
            $0.mapping = mapping
            $0.columnTypes = types
        }
        if let version {
            state.withLock {
                $0.confirmed = version
                $0.saved = version
            }
            return .resumed
        }
        let now = try await currentPosition()
        try await save(now)
        state.withLock { $0.createdStart = true }
        return .created
    }

    /// `database.createDatabase`: creates the configured database through `master`.
    func createDatabaseIfMissing() async throws {
        guard let name = settings.database, !name.isEmpty else { throw SQLServerError.needsDatabaseName() }
        var master = settings
        master.database = "master"
        let c = try await SQLServerConnection.connect(master, logger: logger)
        defer { c.close() }
        let created = try await c.session { s -> Bool in
            let before = try s.query(SQLStatement("SELECT DB_ID(@p1);", [.string(name)])).rows.first?.first
            guard before == nil || before == .null else { return false }
            try s.query(SQLServerSQL.createDatabase(name))
            return true
        }
        if created { logger.info("Created the database", metadata: ["db.name": "\(name)"]) }
    }

    /// The tables the poller follows: the mapped ones and their link tables, each by its
    /// primary key, the only columns change tracking reports (a table with `databasePrimaryKey`
    /// by its database key, not by its RealmId).
    ///
    /// A round reads them in this order, links' targets first (the loader's order): a parent and
    /// its child inserted between two rounds reach the Realm parent first, as they must.
    static func followed(_ mapping: Mapping) -> [TrackedTable] {
        ((try? LoadPlan(mapping).tables) ?? mapping.tables).map {
            TrackedTable(name: $0.table, keyColumns: $0.databaseKey.map { [$0.column] } ?? $0.keyColumns)
        }
            + mapping.tables.flatMap(\.linkLists).map {
                TrackedTable(
                    name: $0.table,
                    keyColumns: [LinkListMapping.ownerColumn, LinkListMapping.indexColumn])
            }
    }

    /// Turns change tracking on, or installs the capture triggers, for the followed tables and the
    /// state table; under triggers, reads the declared types the log's keys are read as.
    func startCapture(_ s: SQLServerSession, _ mapping: Mapping, resuming: Bool) throws {
        let d = dialect
        guard state.withLock({ $0.capture }) == .triggers else {
            for statement in Self.tracking(mapping, d) { try s.query(statement) }
            return
        }
        try Self.installTriggers(s, Self.followed(mapping) + [Self.stateTracked], d, resuming: resuming)
        let declared = try Self.declaredTypes(s, schema: configuration.schema)
        state.withLock { $0.declaredTypes = declared }
    }

    /// Where the database's changes are now: the change-tracking version, or the trigger log's
    /// number below which nothing is in flight.
    func currentPosition() async throws -> Int64 {
        let c = try await connection(\.writer)
        let d = dialect
        guard state.withLock({ $0.capture }) == .triggers else {
            return try await c.session { s in try SQLServerChangeReader.version(s, d) }
        }
        let gate = try await connection(\.gate)
        return try await c.session { s in
            let n = try gate.sessionSync { g in try SQLServerTriggerReader.snapshotStart(s, gate: g, d) }
            try s.execute("COMMIT TRANSACTION; SET TRANSACTION ISOLATION LEVEL READ COMMITTED;")
            return n
        }
    }

    /// The statements that turn change tracking on where it is off: the followed tables, and the
    /// state table, whose markers tell the poller which transactions were the daemon's own.
    static func tracking(_ mapping: Mapping, _ d: SQLServerDialect) -> [SQLStatement] {
        (followed(mapping).map(\.name) + [SQLServerSQL.stateTable]).map { SQLServerSQL.track($0, d) }
    }

    /// What this connector cannot sync yet, named.
    static func check(_ mapping: Mapping) throws {
        var problems: [String] = []
        for t in mapping.tables {
            for c in t.columns {
                if case .array = c.kind {
                    problems.append("\(t.type.name).\(c.property.name): SQL Server has no array columns")
                }
            }
        }
        guard problems.isEmpty else { throw SQLServerError.mismatch(problems) }
    }

    /// Saves the version the Realms hold, as the next start's resume point.
    func save(_ version: Int64) async throws {
        let c = try await connection(\.writer)
        let (d, name) = (dialect, options.trackingName)
        _ = try await c.session { s in
            try s.query(
                d.statement(
                    """
                    UPDATE \(table: SQLServerSQL.pollerTable) SET version = \(version) WHERE adapter = \(name);
                    IF @@ROWCOUNT = 0 INSERT INTO \(table: SQLServerSQL.pollerTable) (adapter, version) \
                    VALUES (\(name), \(version));
                    """))
        }
        state.withLock {
            $0.saved = max($0.saved, version)
            $0.confirmed = max($0.confirmed, version)
        }
        if state.withLock({ $0.capture }) == .triggers { try await trimLog() }
    }

    // MARK: Realm → database

    public func appliedVersions(adapter: String) async throws -> [String: Int64] {
        let c = try await connection(\.writer)
        let d = dialect
        let rows = try await c.session { s in try s.query(SQLServerSQL.appliedVersions(adapter: adapter, d)).rows }
        var out: [String: Int64] = [:]
        for r in rows { if case .string(let p) = r[0], case .int(let v) = r[1] { out[p] = v } }
        return out
    }

    /// Runs `statements` in one SQL transaction, then the marker, tagged; rolls back on error.
    func transaction(_ statements: [SQLStatement], adapter: String, path: String, version: Int64) async throws {
        let c = try await connection(\.writer)
        let (d, context) = (dialect, statementContext)
        do {
            try await c.session { s in
                try s.execute("BEGIN TRANSACTION;")
                do {
                    for statement in statements { try s.query(statement) }
                    try s.query(SQLServerWrites.marker(adapter: adapter, path: path, version: version, d, context))
                    try s.execute("COMMIT TRANSACTION;")
                } catch {
                    try? s.execute("IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;")
                    throw error
                }
            }
        } catch let e as SQLServerError where e.isTransient {
            state.withLock { $0.writer = nil }
            throw e
        }
    }

    public func apply(_ writes: [DatabaseWrite], adapter: String, path: String, version: Int64) async throws {
        let generated = state.withLock { $0.generated }
        let batches = SQLServerWrites.batches(
            writes, schema: configuration.schema, context: statementContext, generated: generated)
        try await transaction(batches, adapter: adapter, path: path, version: version)
    }

    public func deadLetter(_ instructions: [Instruction], error: String, adapter: String, path: String, version: Int64)
        async throws
    {
        let json = JSONValue.array(instructions.map { $0.json() }).serialized()
        let letter = dialect.statement(
            """
            INSERT INTO \(table: SQLServerSQL.deadLetterTable) (adapter, path, version, instructions, error) \
            VALUES (\(adapter), \(path), \(version), \(json), \(error));
            """)
        try await transaction([letter], adapter: adapter, path: path, version: version)
    }

    // MARK: Database → Realm

    public func changes() async throws -> AsyncThrowingStream<DatabaseTransaction, Error> {
        guard let mapping = state.withLock({ $0.mapping }) else { throw SQLServerError.notPrepared() }
        let reader = try await connection(\.reader)
        let (d, context) = (dialect, self.context)
        let columns = readColumns(mapping)
        let (triggers, declared) = state.withLock { ($0.capture == .triggers, $0.declaredTypes) }
        let gate = triggers ? try await connection(\.gate) : nil
        let start = state.withLock {
            $0.streamStarted = true
            return $0.confirmed
        }
        // The poller's place and the tokens live in the stream's one round at a time.
        let round = Mutex(
            (
                poller: ChangeTrackingPoller(
                    tables: Self.followed(mapping),
                    stateTable: Self.stateTracked,
                    context: context, from: start),
                token: UInt64(0)
            ))
        return pollingStream(every: .milliseconds(options.pollIntervalMs)) {
            let (confirmed, saved) = self.state.withLock { ($0.confirmed, $0.saved) }
            if confirmed > saved { try await self.save(confirmed) }
            let (poller, first) = round.withLock { ($0.poller, $0.token) }
            let (transactions, next) = try await reader.session { s in
                var p = poller
                var t = first
                func token() -> UInt64 {
                    t += 1
                    return t
                }
                guard let gate else {
                    return (
                        try p.poll(SQLServerChangeReader(session: s, dialect: d, columns: columns), token: token), p
                    )
                }
                let txs = try gate.sessionSync { g in
                    try p.poll(
                        SQLServerTriggerReader(
                            session: s, gate: g, dialect: d, columns: columns, keyTypes: declared, since: p.last),
                        token: token)
                }
                return (txs, p)
            }
            round.withLock { $0 = (next, first + UInt64(transactions.count)) }
            return transactions
        }
    }

    /// Per followed table, the columns each change reads and how.
    func readColumns(_ mapping: Mapping) -> [String: [(name: String, expression: String)]] {
        let types = state.withLock { $0.columnTypes }
        let d = dialect
        var out: [String: [(name: String, expression: String)]] = [:]
        func add(_ table: String, _ columns: [String]) {
            out[table] = columns.map { c in
                (c, SQLServerType.selectExpression(d.quote(c), type: SQLServerSchema.type(types, table, c)))
            }
        }
        for t in mapping.tables { add(t.table, t.columns.map(\.column) + t.pathColumns) }
        for l in mapping.tables.flatMap(\.linkLists) {
            add(l.table, [LinkListMapping.ownerColumn, LinkListMapping.indexColumn, LinkListMapping.targetColumn])
        }
        add(SQLServerSQL.stateTable, ["adapter", "path", "version"])
        return out
    }

    public func processed(_ transaction: DatabaseTransaction) {
        guard let v = ChangeTrackingPoller.version(of: transaction.position) else { return }
        state.withLock { $0.confirmed = max($0.confirmed, v) }
    }

    public func linkList(_ list: LinkListMapping, owner: Value) throws -> [Value] {
        let c = try connectionSync(\.reader)
        let (o, t, i) = (LinkListMapping.ownerColumn, LinkListMapping.targetColumn, LinkListMapping.indexColumn)
        let sql = dialect.statement(
            "SELECT \(id: t) FROM \(table: list.table) WHERE \(id: o) = \(owner) ORDER BY \(id: i)")
        return try c.sessionSync { s in try s.query(sql).rows.map { $0[0] } }
    }

    public func row(_ table: String, key: DatabaseRow, columns: [String]) throws -> DatabaseRow? {
        let c = try connectionSync(\.reader)
        let d = dialect
        let types = state.withLock { $0.columnTypes }
        let selected = columns.map {
            SQLServerType.selectExpression(d.quote($0), type: SQLServerSchema.type(types, table, $0))
        }
        let conditions = SQL.joined(
            key.values.keys.sorted().map { "\(id: $0) = \(key.values[$0]!)" }, separator: " AND ")
        let sql = d.statement(
            "SELECT \(raw: selected.joined(separator: ", ")) FROM \(table: table) WHERE \(sql: conditions)")
        guard let r = try c.sessionSync({ s in try s.query(sql).rows.first }) else { return nil }
        return DatabaseRow(Dictionary(uniqueKeysWithValues: zip(columns, r)))
    }

    public func writeRealmIds(_ assignments: [RealmIdAssignment]) throws {
        guard !assignments.isEmpty else { return }
        let c = try connectionSync(\.writer)
        let statements = SQLServerWrites.realmIdUpdates(
            assignments, schema: configuration.schema, context: statementContext)
        try c.sessionSync { s in
            try s.execute("BEGIN TRANSACTION;")
            do {
                for statement in statements { try s.query(statement) }
                try s.execute("COMMIT TRANSACTION;")
            } catch {
                try? s.execute("IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;")
                throw error
            }
        }
    }

    public func setAside(_ rows: [SetAsideRow]) throws {
        let c = try connectionSync(\.writer)
        let (d, name) = (dialect, options.trackingName)
        try c.sessionSync { s in
            for r in rows {
                try s.query(
                    d.statement(
                        """
                        INSERT INTO \(table: SQLServerSQL.deadRowTable) (adapter, position, table_name, row_data, error) \
                        VALUES (\(name), \(r.position), \(r.table), \(r.change.serialized()), \(r.error));
                        """))
            }
        }
    }

    public func applyRealmSchema(_ mapping: Mapping) async throws {
        let c = try await connection(\.writer)
        let d = dialect
        let schema = configuration.schema
        let types = try await c.session { s in
            try s.execute(SQLServerSchema.create(mapping, d))
            try self.startCapture(s, mapping, resuming: false)
            return try SQLServerSchema.columnTypes(s, schema: schema)
        }
        state.withLock {
            $0.mapping = mapping
            $0.columnTypes = types
        }
    }

    /// `change-tracking version 1234`, or `trigger log number 1234`.
    public func describe(position: String) -> String {
        let triggers = options.changeCapture == .triggers || state.withLock({ $0.capture }) == .triggers
        let what = triggers ? "trigger log number" : "change-tracking version"
        return ChangeTrackingPoller.version(of: position).map { "\(what) \($0)" } ?? position
    }

    /// Deletes the resume point ``prepare(_:)`` wrote if no stream read from it: a start that
    /// failed leaves the database as it found it, so the next start is a first one again.
    public func abandonUnusedStart() async -> Bool {
        guard state.withLock({ $0.createdStart && !$0.streamStarted }) else { return false }
        do {
            let c = try await connection(\.writer)
            let (d, name) = (dialect, options.trackingName)
            _ = try await c.session { s in
                try s.query(d.statement("DELETE FROM \(table: SQLServerSQL.pollerTable) WHERE adapter = \(name)"))
            }
            state.withLock { $0.createdStart = false }
            return true
        } catch {
            logger.warning(
                "Could not remove the resume point this failed start wrote; the next start may ask for a load",
                metadata: ["trackingName": "\(options.trackingName)", "error": "\(error)"])
            return false
        }
    }

    public func isTransient(_ error: Error) -> Bool { (error as? SQLServerError)?.isTransient ?? false }

    public func shutdown() async {
        let (confirmed, saved) = state.withLock { ($0.confirmed, $0.saved) }
        if confirmed > saved { try? await save(confirmed) }
        let connections = state.withLock { s -> [SQLServerConnection] in
            defer { (s.writer, s.reader, s.lock, s.gate) = (nil, nil, nil, nil) }
            return [s.writer, s.reader, s.lock, s.gate].compactMap { $0 }
        }
        for c in connections { c.close() }
    }
}
