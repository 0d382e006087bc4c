import Foundation
import Logging
import RealmAdapter
import Synchronization

/// The Postgres connector: logical replication (pgoutput) for database → Realm, and one
/// database transaction per Realm transaction, on a session tagged with a replication origin,
/// for Realm → database.
///
/// Tables it keeps in the database's schema: `realm_adapter_state (adapter, path, version)`,
/// the Realm versions applied (written in the same transaction as the data), and
/// `realm_adapter_dead_letter`, the changes the database rejected under `ignoreSQLErrors`.
public final class PostgresConnector: RelationalConnector {
    public let configuration: DatabaseConfiguration
    /// The Postgres members of ``configuration`` (slot, publication, …).
    public let options: PostgresOptions
    public let settings: PostgresSettings
    public let customTypes: [String: ScalarType]
    let logger: Logger
    /// The replication origin that tags the adapter's own writes.
    public let originName: String
    /// The origin that tags RealmIds written back to rows (``writeRealmIds(_:)``): a second
    /// one, because an origin is active in one session at a time.
    public var idsOriginName: String { originName + "_ids" }
    public var sourceName: String { "postgres:\(options.slotName)" }
    var schema: String { configuration.schema }
    var dialect: PostgresDialect { PostgresDialect(schema: schema) }

    private struct State {
        var writer: PostgresConnection?
        var reader: PostgresConnection?
        /// The database's own types, read on the reader connection when it opens.
        var catalog = PostgresTypeCatalog()
        var idWriter: PostgresConnection?
        var stream: PostgresReplicationStream?
        /// Mapped generated columns per table: pgoutput does not carry them, so they are read back.
        var generatedColumns: [String: [String]] = [:]
        /// `ON CONFLICT` columns of tables whose key alone has no unique index (partitioned tables).
        var conflictTargets: [String: [String]] = [:]
        /// The tables runs of writes reach as JSON, with their json columns
        /// (``PostgresSchema/bulkTables(_:schema:_:)``).
        var bulkTables: [String: [String: String]] = [:]
        /// Tables with a `GENERATED ALWAYS` identity column (inserts override it).
        var identityTables: Set<String> = []
        /// The columns the mapping reads, by table (link tables too).
        var mappedColumns: [String: Set<String>] = [:]
        /// The mapped tables by OID (a table renamed while the stream runs is known by it).
        var mappedOIDs: [UInt32: String] = [:]
        /// Link columns whose foreign key cascades deletes (``PostgresSchema/linksTheDatabaseFollows(schema:_:)``).
        var cascading: [String: Set<String>] = [:]
        /// Holds the daemon lock (a session-level advisory lock) while the daemon runs.
        var lockHolder: PostgresConnection?
        /// Whether ``prepare(_:)`` created the slot, and whether a stream has started on it since.
        var createdSlot = false
        var streamStarted = false
        /// The streamed transactions not yet processed, in order, and whether reads see them yet
        /// (see ``PostgresVisibility``).
        var streamed: [(xid: UInt32, visible: Bool)] = []
    }
    private let state = Mutex(State())

    public init(configuration: DatabaseConfiguration, customTypes: [String: ScalarType] = [:], logger: Logger) {
        self.configuration = configuration
        self.options = configuration.postgres
        self.settings = PostgresSettings(configuration)
        self.customTypes = customTypes
        self.logger = logger
        self.originName = "realm_adapter_" + options.slotName
    }

    static let stateTable = "realm_adapter_state"
    static let deadLetterTable = "realm_adapter_dead_letter"
    static let deadRowTable = "realm_adapter_dead_row"

    // MARK: Connections

    /// The connection for writes, with the replication origin set up; opened on first use and
    /// again after a failure.
    func writer() async throws -> PostgresConnection {
        if let w = state.withLock({ $0.writer }), w.isAlive { return w }
        let w = try await PostgresConnection.connect(settings, logger: self.logger)
        let origin = originName
        try await w.session { s in
            try PostgresReplicationSetup.ensureOrigin(s, origin)
            try s.query("SELECT pg_replication_origin_session_setup($1)", [origin])
        }
        state.withLock { $0.writer = w }
        return w
    }

    // MARK: RelationalConnector

    @discardableResult
    public func prepare(_ mapping: Mapping) async throws -> StreamStart {
        if configuration.createDatabase { try await createDatabaseIfMissing() }  // the lock needs the database
        try await lockDaemon()
        try await prepareDatabase(mapping)
        let c = options
        let admin = try await PostgresConnection.connect(settings, logger: self.logger)
        defer { admin.close() }
        let needsSlot = try await admin.session { s in try !PostgresReplicationSetup.slotExists(s, c.slotName) }
        if needsSlot {
            let repl = try await PostgresConnection.connect(settings, replication: true, logger: logger)
            defer { repl.close() }
            let slot = c.slotName
            let (lsn, _) = try await repl.session { s in try PostgresReplicationSetup.createSlot(s, slot) }
            logger.info("Created the replication slot", metadata: ["pg.slot": "\(slot)", "pg.lsn": "\(lsn)"])
            state.withLock { $0.createdSlot = true }
        }
        return !needsSlot ? .resumed : c.resetReplicationSlot ? .restarted : .created
    }

    /// One daemon per slot: a session-level advisory lock, taken before the slot and the origin
    /// are touched and held on a connection of its own until ``shutdown()`` (or the process
    /// ends), so that a second daemon stops at once with a clear reason.
    func lockDaemon() async throws {
        if state.withLock({ $0.lockHolder?.isAlive == true }) { return }
        let holder = try await PostgresConnection.connect(settings, logger: self.logger)
        let lockKey = String(Int64(bitPattern: PostgresSQL.fnv1a("realm-adapter daemon:" + options.slotName)))
        // A daemon that just stopped or crashed holds the lock until the server has seen its
        // connection end, a moment later: wait a little before calling it a second daemon.
        var locked = false
        for attempt in 0..<50 {
            locked = try await holder.session { s in
                try s.query("SELECT pg_try_advisory_lock($1::bigint)", [lockKey]).rows == [["t"]]
            }
            if locked { break }
            if attempt < 49 { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard locked else {
            holder.close()
            throw PostgresError.daemonRunning(options.slotName)
        }
        state.withLock { $0.lockHolder = holder }
    }

    /// Everything ``prepare(_:)`` does but the slot: the database and tables (if configured),
    /// the check that they match the mapping, the state tables, replica identities, the publication.
    func prepareDatabase(_ mapping: Mapping) async throws {
        try PostgresSchema.checkNameLengths(mapping)
        if configuration.createDatabase { try await createDatabaseIfMissing() }
        let admin = try await PostgresConnection.connect(settings, logger: self.logger)
        defer { admin.close() }
        let c = options
        let createSchema = configuration.createSchema
        let schema = self.schema
        let customTypes = self.customTypes
        try await admin.session { s in
            if createSchema { try PostgresSchema.create(mapping, schema: schema, s) }
            let problems = try PostgresSchema.mismatches(mapping, schema: schema, customTypes: customTypes, s)
            guard problems.isEmpty else {
                throw PostgresError.mismatch(problems)
            }
            try s.execute(
                PostgresDialect(schema: schema).statement(
                    """
                    CREATE TABLE IF NOT EXISTS \(table: Self.stateTable) (
                        adapter text NOT NULL, path text NOT NULL, version bigint NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (adapter, path));
                    CREATE TABLE IF NOT EXISTS \(table: Self.deadLetterTable) (
                        id bigserial PRIMARY KEY, adapter text NOT NULL, path text NOT NULL, version bigint NOT NULL,
                        instructions jsonb NOT NULL, error text NOT NULL, failed_at timestamptz NOT NULL DEFAULT now());
                    CREATE TABLE IF NOT EXISTS \(table: Self.deadRowTable) (
                        id bigserial PRIMARY KEY, slot text NOT NULL, position text NOT NULL, table_name text NOT NULL,
                        row_data jsonb NOT NULL, error text NOT NULL, failed_at timestamptz NOT NULL DEFAULT now())
                    """
                ).text)
            try Self.follow(mapping, schema: schema, publication: c.publication, s, logger: self.logger)
            if c.resetReplicationSlot { try PostgresReplicationSetup.dropSlot(s, c.slotName) }
            try self.learnTables(mapping, s)
        }
    }

    /// Sets what the change stream needs for the mapped tables: replica identities and the
    /// publication (the mapped tables, their link tables and the state table).
    ///
    /// A mapped table without a replica identity gets one, said at info level.
    static func follow(
        _ mapping: Mapping, schema: String, publication: String, _ s: PostgresSession, logger: Logger
    ) throws {
        // Rows routed to Realms by columns must carry them on delete too, and link-table rows
        // (no key of their own) their whole content.
        let d = PostgresDialect(schema: schema)
        for t in mapping.tables {
            if mapping.path.isLiteral {
                if let set = try PostgresReplicationSetup.ensureReplicaIdentity(s, schema: schema, table: t.table) {
                    logger.info(
                        "The table had no replica identity (no primary key): it has one now, so its updates publish",
                        metadata: ["db.table": "\(t.table)", "replica_identity": "\(set)"])
                }
            } else {
                try s.query(d.statement("ALTER TABLE \(table: t.table) REPLICA IDENTITY FULL"))
            }
        }
        for l in mapping.tables.flatMap(\.linkLists) {
            try s.query(d.statement("ALTER TABLE \(table: l.table) REPLICA IDENTITY FULL"))
        }
        // The state table is published too: its rows in our own transactions say which Realm
        // versions the database holds at that point (the convergence rule needs it).
        let tables = mapping.tables.map(\.table) + mapping.tables.flatMap { $0.linkLists.map(\.table) }
        try PostgresReplicationSetup.ensurePublication(
            s, name: publication, schema: schema, tables: tables + [stateTable])
    }

    /// What writes and the stream need to know of the mapped tables: the conflict targets of
    /// upserts, the generated columns to read back.
    func learnTables(_ mapping: Mapping, _ s: PostgresSession) throws {
        let targets = try PostgresSchema.conflictTargets(mapping, schema: schema, s)
        let generated = try PostgresSchema.generatedColumns(mapping, schema: schema, s)
        let bulk = try PostgresSchema.bulkTables(
            mapping.tables.map(\.table) + mapping.tables.flatMap { $0.linkLists.map(\.table) }, schema: schema, s)
        let cascading = try PostgresSchema.linksTheDatabaseFollows(schema: schema, s)
        var mapped: [String: Set<String>] = [:]
        for t in mapping.tables {
            mapped[t.table] = Set(t.columns.map(\.column) + t.keyColumns + t.pathColumns)
            for l in t.linkLists {
                mapped[l.table] = [
                    LinkListMapping.ownerColumn, LinkListMapping.indexColumn, LinkListMapping.targetColumn,
                ]
            }
        }
        let oids = try PostgresSchema.oids(of: Array(mapped.keys), schema: schema, s)
        let identity = try PostgresSchema.identityAlwaysTables(schema: schema, s)
        state.withLock {
            $0.identityTables = identity
            $0.mappedColumns = mapped
            $0.mappedOIDs = oids
            $0.conflictTargets = targets
            $0.generatedColumns = generated
            $0.bulkTables = bulk
            $0.cascading = cascading
        }
    }

    /// `applyRealmSchemaChanges`: the tables and columns the grown mapping has and the database
    /// lacks (new columns are nullable: existing rows have no value), followed by the stream.
    public func applyRealmSchema(_ mapping: Mapping) async throws {
        try PostgresSchema.checkNameLengths(mapping)
        let admin = try await PostgresConnection.connect(settings, logger: self.logger)
        defer { admin.close() }
        let schema = self.schema
        let publication = options.publication
        let customTypes = self.customTypes
        try await admin.session { s in
            try s.transaction {
                try PostgresSchema.addMissingColumns(mapping, schema: schema, customTypes: customTypes, s)
                try PostgresSchema.create(mapping, schema: schema, s)
                // A column that was there already may not hold what the Realm added: refused as at start.
                let problems = try PostgresSchema.mismatches(mapping, schema: schema, customTypes: customTypes, s)
                guard problems.isEmpty else { throw PostgresError.mismatch(problems) }
                try Self.follow(mapping, schema: schema, publication: publication, s, logger: self.logger)
            }
            try self.learnTables(mapping, s)
        }
    }

    /// `createDatabase`: creates the configured database through the `postgres` maintenance database.
    func createDatabaseIfMissing() async throws {
        let name = settings.database ?? settings.url.flatMap { try? ConnectionString($0) }?.database ?? ""
        guard !name.isEmpty else {
            throw PostgresError.needsDatabaseName()
        }
        var maintenance = settings
        maintenance.database = "postgres"
        let pg = try await PostgresConnection.connect(maintenance, logger: logger)
        defer { pg.close() }
        let created = try await pg.session { s -> Bool in
            guard try s.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]).rows.isEmpty else { return false }
            try s.query(PostgresDialect(schema: "").statement("CREATE DATABASE \(id: name)"))
            return true
        }
        if created { logger.info("Created the database", metadata: ["db.name": "\(name)"]) }
    }

    public func appliedVersions(adapter: String) async throws -> [String: Int64] {
        let w = try await writer()
        let d = dialect
        let rows = try await w.session { s in
            try s.query(d.statement("SELECT path, version FROM \(table: Self.stateTable) WHERE adapter = \(adapter)"))
                .rows
        }
        return Dictionary(
            rows.compactMap { r in r[0].flatMap { p in r[1].flatMap(Int64.init).map { (p, $0) } } },
            uniquingKeysWith: max)
    }

    public func apply(_ writes: [DatabaseWrite], adapter: String, path: String, version: Int64) async throws {
        let w = try await writer()
        let schema = self.schema
        let (targets, bulkTables, cascading, generated, identity) = state.withLock {
            ($0.conflictTargets, $0.bulkTables, $0.cascading, $0.generatedColumns, $0.identityTables)
        }
        // Links a foreign key deletes or resets with its target are left to it (the database's
        // rule, which comes back to the Realm), not nulled first.
        let writes =
            cascading.isEmpty
            ? PostgresWrites.withoutGenerated(writes, generated)
            : PostgresWrites.withoutGenerated(writes, generated).filter { write in
                guard case .updateAll(let table, _, let values) = write, let columns = cascading[table] else {
                    return true
                }
                return !values.values.keys.allSatisfy(columns.contains)
            }
        do {
            try await w.session { s in
                try s.transaction {
                    let planned = PostgresWrites.overridingIdentity(
                        PostgresWrites.statements(
                            writes, schema: schema, conflictTargets: targets, bulkTables: bulkTables,
                            copyRows: Self.copyRows), tables: identity, schema: schema)
                    let results = try Self.run(planned, s)
                    if let refusal = zip(planned, results).lazy.compactMap({ $0.refusal($1) }).first { throw refusal }
                    // Rows these statements may not have seen: named in the stream, to be read again.
                    let missed = zip(planned, results).flatMap { $0.missedRows($1) }.map {
                        SQLStatement(
                            "SELECT pg_logical_emit_message(true, $1, $2)",
                            [.string(PostgresReplicationStream.messagePrefix), .string($0.json.serialized())])
                    }
                    try s.pipeline(
                        missed + [Self.marker(adapter: adapter, path: path, version: version, schema: schema)])
                }
            }
        } catch let e as PostgresError where e.isTransient {
            state.withLock { $0.writer = nil }
            throw e
        }
    }

    /// Runs of at least this many upserts or inserts go as `COPY` first (``CopyRun``): below it,
    /// the savepoint's and `COPY`'s round trips would cost more than they save.
    static let copyRows = 64

    /// Runs planned statements in order: pipelined, and each ``CopyRun`` as `COPY` in a savepoint,
    /// its statement run instead if the `COPY` fails. Returns one result per planned statement.
    static func run(_ planned: [PostgresWrites.Planned], _ s: PostgresSession) throws -> [PostgresResult] {
        var results: [PostgresResult] = []
        var i = 0
        while i < planned.count {
            if let copy = planned[i].copy {
                results.append(try copyFirst(copy, planned[i].statement, s))
                i += 1
                continue
            }
            var end = i
            while end < planned.count, planned[end].copy == nil { end += 1 }
            // A statement that returns a row per row it found ends its group when that may be many.
            results += try s.pipeline(planned[i..<end].map(\.statement)) { planned[i + $0].returnsFound.count > 1_000 }
            i = end
        }
        return results
    }

    /// `copy` as `COPY` inside a savepoint; if the database refuses it (a key taken, say), back
    /// to the savepoint and the upsert or insert it stands for.
    private static func copyFirst(_ copy: CopyRun, _ statement: SQLStatement, _ s: PostgresSession) throws
        -> PostgresResult
    {
        try s.execute("SAVEPOINT realm_adapter_copy")
        do {
            let copied = try s.copyIn(copy.sql, bytes: copy.write)
            try s.execute("RELEASE SAVEPOINT realm_adapter_copy")
            return PostgresResult(columns: [], rows: [], affected: copied)
        } catch let e as PostgresError where e.code == .queryFailed {
            try s.execute("ROLLBACK TO SAVEPOINT realm_adapter_copy; RELEASE SAVEPOINT realm_adapter_copy")
            return try s.query(copy.fallback(statement))
        }
    }

    public func deadLetter(_ instructions: [Instruction], error: String, adapter: String, path: String, version: Int64)
        async throws
    {
        let w = try await writer()
        let schema = self.schema
        let json = JSONValue.array(instructions.map { $0.json() }).serialized()
        let letter = dialect.statement(
            """
            INSERT INTO \(table: Self.deadLetterTable) (adapter, path, version, instructions, error)
            VALUES (\(adapter), \(path), \(version), \(json), \(error))
            """)
        try await w.session { s in
            try s.transaction {
                try s.query(letter)
                try s.query(Self.marker(adapter: adapter, path: path, version: version, schema: schema))
            }
        }
    }

    public func changes() async throws -> AsyncThrowingStream<DatabaseTransaction, Error> {
        state.withLock {
            $0.stream?.stop()
            $0.stream = nil
        }
        let stream = try await PostgresReplicationStream(
            settings: settings, slot: options.slotName, publication: options.publication,
            schema: schema, customTypes: customTypes, logger: self.logger)
        stream.partSize = configuration.largeTransactionChanges
        // A mapped table or column renamed or dropped while the stream runs: its changes would
        // come under a name the mapping does not know, and be lost. A table is known by its OID;
        // a column's values are read from the table as it is now (an error if it is gone there).
        let (mapped, byOID) = state.withLock { ($0.mappedColumns, $0.mappedOIDs) }
        let logger = self.logger
        stream.adjustRelation = { r in
            let name = byOID[r.oid] ?? r.name
            let gone = (mapped[name] ?? []).subtracting(r.columns.map(\.name)).sorted()
            if name != r.name || !gone.isEmpty {
                logger.warning(
                    """
                    A mapped table or column was renamed or dropped while the daemon ran: its changes \
                    reach the Realms, with the gone columns' values read from the table as it is now
                    """,
                    metadata: ["db.table": "\(name)", "db.relation": "\(r.name)", "db.columns": "\(gone)"])
            }
            return (name, gone)
        }
        try stream.start()
        state.withLock {
            $0.stream = stream
            $0.streamStarted = true
            $0.streamed = []
        }
        let origins: Set<String> = [originName, idsOriginName]
        let readBack = state.withLock { $0.generatedColumns }
        return AsyncThrowingStream { continuation in
            let task = Task { [weak self] in
                do {
                    for try await tx in stream.transactions {
                        self?.state.withLock { $0.streamed.append((tx.xid, false)) }
                        var markers: [AppliedMarker] = []
                        var changes: [RowChange] = []
                        let missed = tx.messages.compactMap { try? RowReference(json: JSONValue(parsing: Data($0))) }
                        for change in tx.changes {
                            switch change {
                            case .insert(Self.stateTable, let row), .update(Self.stateTable, let row, _):
                                if case .string(let a)? = row["adapter"], case .string(let p)? = row["path"],
                                    case .int(let v)? = row["version"]
                                {
                                    markers.append(AppliedMarker(adapter: a, path: p, version: v))
                                }
                            case .delete(Self.stateTable, _):
                                continue
                            default:
                                changes.append(change)
                            }
                        }
                        // A part of a large transaction sorts after what came before and before its end;
                        // the slot moves only past a whole one.
                        let position =
                            tx.isComplete
                            ? Self.position(tx.endLSN)
                            : Self.position(tx.commitLSN) + ":" + Self.zeroPadded(String(tx.part), 8)
                        continuation.yield(
                            DatabaseTransaction(
                                position: position, isOwn: tx.origin.map(origins.contains) ?? false,
                                changes: changes, token: tx.isComplete ? tx.endLSN.value : 0, markers: markers,
                                missedRows: missed,
                                readBack: tx.readBack.isEmpty
                                    ? readBack
                                    : readBack.merging(tx.readBack) { a, b in a + b.filter { !a.contains($0) } },
                                commitTime: Self.timestamp(pgMicroseconds: tx.commitTime),
                                isPart: !tx.isComplete || tx.part > 0))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                task.cancel()
                stream.stop()
            }
        }
    }

    /// A pgoutput time (microseconds since 2000-01-01 UTC).
    static func timestamp(pgMicroseconds t: Int64) -> Timestamp {
        let unix = t + 946_684_800_000_000
        let (s, us) = unix.quotientAndRemainder(dividingBy: 1_000_000)
        return us < 0
            ? Timestamp(seconds: s - 1, nanoseconds: Int32((us + 1_000_000) * 1000))
            : Timestamp(seconds: s, nanoseconds: Int32(us * 1000))
    }

    public func processed(_ transaction: DatabaseTransaction) {
        let stream = state.withLock { s in
            if !s.streamed.isEmpty { s.streamed.removeFirst() }
            return s.stream
        }
        stream?.processed(through: LSN(transaction.token))
    }

    /// The connection for reads on the applying thread (link lists, owners, columns the stream
    /// does not carry), opened on the caller's thread (never the cooperative pool) on first use
    /// and after a failure. Its reads see every transaction the stream has delivered.
    func reader() throws -> PostgresConnection {
        let reader: PostgresConnection
        if let r = state.withLock({ $0.reader }), r.isAlive {
            reader = r
        } else {
            reader = try PostgresConnection.connectSync(settings, logger: self.logger)
            let catalog = try reader.sessionSync { s in try PostgresTypeCatalog.load(s) }
            state.withLock {
                $0.reader = reader
                $0.catalog = catalog
            }
        }
        // Every read asks (a row read back per change): nothing is built when all are seen already.
        let unseen = state.withLock { s in
            s.streamed.contains { !$0.visible } ? s.streamed.filter { !$0.visible }.map(\.xid) : []
        }
        guard !unseen.isEmpty else { return reader }
        let seen = try reader.sessionSync { s in try PostgresVisibility.wait(until: unseen, areVisibleIn: s) }
        if !seen {
            logger.warning(
                "Streamed transactions are still not visible to other sessions; reading the rows as they are",
                metadata: ["pg.xids": "\(unseen)"])
        }
        state.withLock { s in
            for i in s.streamed.indices where unseen.contains(s.streamed[i].xid) { s.streamed[i].visible = true }
        }
        return reader
    }

    /// The connection that writes RealmIds back, tagged with its own origin; opened on the
    /// caller's thread on first use and after a failure.
    func idWriter() throws -> PostgresConnection {
        if let w = state.withLock({ $0.idWriter }), w.isAlive { return w }
        let w = try PostgresConnection.connectSync(settings, logger: self.logger)
        let origin = idsOriginName
        try w.sessionSync { s in
            try PostgresReplicationSetup.ensureOrigin(s, origin)
            try s.query("SELECT pg_replication_origin_session_setup($1)", [origin])
        }
        state.withLock { $0.idWriter = w }
        return w
    }

    public func writeRealmIds(_ assignments: [RealmIdAssignment]) throws {
        guard !assignments.isEmpty else { return }
        let statements = PostgresWrites.realmIdUpdates(assignments, schema: schema)
        try idWriter().sessionSync { s in
            try s.transaction {
                for statement in statements { try s.query(statement) }
            }
        }
    }

    public func setAside(_ rows: [SetAsideRow]) throws {
        let (d, slot) = (dialect, options.slotName)
        try idWriter().sessionSync { s in
            try s.transaction {
                for r in rows {
                    try s.query(
                        d.statement(
                            """
                            INSERT INTO \(table: Self.deadRowTable) (slot, position, table_name, row_data, error)
                            VALUES (\(slot), \(r.position), \(r.table), \(r.change.serialized()), \(r.error))
                            """))
                }
            }
        }
    }

    public func row(_ table: String, key: DatabaseRow, columns: [String]) throws -> DatabaseRow? {
        let conditions = SQL.joined(
            key.values.keys.sorted().map { "\(id: $0) = \(key.values[$0]!)" }, separator: " AND ")
        let sql = dialect.statement("SELECT \(ids: columns) FROM \(table: table) WHERE \(sql: conditions)")
        let result = try reader().sessionSync { s in try s.query(sql) }
        guard let first = result.rows.first else { return nil }
        let (catalog, customTypes) = (state.withLock { $0.catalog }, self.customTypes)
        var row = DatabaseRow()
        for (i, c) in columns.enumerated() {
            // Typed as the change stream types them, so that a Realm path renders the same.
            let type =
                catalog.resolve(oid: result.types[i], customTypes: customTypes)
                ?? PostgresType(oid: 0, name: "text", kind: .scalar(.string))
            do { row[c] = try first[i].map { try type.decode($0) } ?? .null } catch let e as RealmAdapterError {
                row.unreadable[c] = e.message  // a bad row, as in the change stream
            }
        }
        return row
    }

    public func linkList(_ list: LinkListMapping, owner: Value) throws -> [Value] {
        let reader = try reader()
        let sql = dialect.statement("SELECT target FROM \(table: list.table) WHERE oid = \(owner) ORDER BY idx")
        let rows = try reader.sessionSync { s in try s.query(sql).rows }
        let type = PostgresType(oid: 0, name: list.targetKeyType.rawValue, kind: .scalar(list.targetKeyType))
        return try rows.compactMap { r in try r[0].map { try type.decode($0) } }
    }

    public func isTransient(_ error: Error) -> Bool {
        (error as? PostgresError)?.isTransient ?? false
    }

    /// Drops the slot ``prepare(_:)`` created if no stream started on it: a start that failed
    /// must not leave a slot retaining WAL (nothing was read from it).
    public func abandonUnusedStart() async -> Bool {
        guard state.withLock({ $0.createdSlot && !$0.streamStarted }) else { return false }
        do {
            let admin = try await PostgresConnection.connect(settings, logger: self.logger)
            defer { admin.close() }
            let slot = options.slotName
            try await admin.session { s in try PostgresReplicationSetup.dropSlot(s, slot) }
            state.withLock { $0.createdSlot = false }
            logger.info(
                "Dropped the replication slot this start created: the start failed before reading from it",
                metadata: ["pg.slot": "\(slot)"])
            return true
        } catch {
            logger.warning(
                """
                Could not drop the replication slot this failed start created; drop it by hand \
                (SELECT pg_drop_replication_slot(…)) or it keeps WAL
                """,
                metadata: ["pg.slot": "\(options.slotName)", "error": "\(error)"])
            return false
        }
    }

    public func shutdown() async {
        let (w, r, i, stream, lock) = state.withLock { s in
            defer {
                s.writer = nil
                s.reader = nil
                s.idWriter = nil
                s.stream = nil
                s.lockHolder = nil
            }
            return (s.writer, s.reader, s.idWriter, s.stream, s.lockHolder)
        }
        stream?.stop()
        for c in [w, r, i, lock] { c?.close() }
    }

    /// An LSN as a position string: 16 hexadecimal digits, so positions sort as strings. The
    /// parts of a large transaction are `<its commit LSN>:<part, 8 digits>`, which sort after
    /// every earlier transaction's end and before its own.
    static func position(_ lsn: LSN) -> String { zeroPadded(String(lsn.value, radix: 16, uppercase: true), 16) }

    static func zeroPadded(_ digits: String, _ width: Int) -> String {
        String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension PostgresConnector: DatabaseConnector {
    /// The WAL the replication slot keeps the server from recycling.
    public func retainedBytes() async throws -> Int64? {
        let pg = try await PostgresConnection.connect(settings, logger: self.logger)
        defer { pg.close() }
        let slot = options.slotName
        return try await pg.session { s in try PostgresReplicationSetup.slotStatus(s, slot)?.retainedBytes }
    }

    /// The applied versions, the dead-letter counts, and the slot: its confirmed position,
    /// whether a daemon streams from it, and the WAL it retains (a warning above
    /// `database.walWarningBytes`: an abandoned slot fills the disk).
    public func statusReport(adapter: String) async throws -> DatabaseStatus {
        let pg = try await PostgresConnection.connect(settings, logger: self.logger)
        defer { pg.close() }
        let slot = options.slotName
        let d = dialect
        let (slotStatus, applied, deadLetters, deadRows, latest) = try await pg.session { s in
            let slotStatus = try PostgresReplicationSetup.slotStatus(s, slot)
            var applied: [String: Int64] = [:]
            var deadLetters = 0
            var deadRows = 0
            var latest: ([DatabaseStatus.DeadLetter], [DatabaseStatus.DeadRow]) = ([], [])
            func exists(_ table: String) throws -> Bool {
                try s.query("SELECT to_regclass($1) IS NOT NULL", [d.table(table)]).rows == [["t"]]
            }
            if try exists(Self.stateTable) {
                for r in try s.query(
                    d.statement("SELECT path, version FROM \(table: Self.stateTable) WHERE adapter = \(adapter)")
                ).rows {
                    if let p = r[0], let v = r[1].flatMap(Int64.init) { applied[p] = v }
                }
                deadLetters = try Self.count(
                    s, d.statement("SELECT count(*) FROM \(table: Self.deadLetterTable) WHERE adapter = \(adapter)"))
                if deadLetters > 0 { latest.0 = try Self.latestDeadLetters(s, d, adapter: adapter) }
                if try exists(Self.deadRowTable) {
                    deadRows = try Self.count(
                        s, d.statement("SELECT count(*) FROM \(table: Self.deadRowTable) WHERE slot = \(slot)"))
                    if deadRows > 0 { latest.1 = try Self.latestDeadRows(s, d, slot: slot) }
                }
            }
            return (slotStatus, applied, deadLetters, deadRows, latest)
        }
        var stream: [String] = []
        var warnings: [String] = []
        if let slotStatus {
            let state = slotStatus.active ? "streaming" : "idle (no daemon connected)"
            stream.append(
                "Slot \(slot): confirmed \(slotStatus.confirmed?.description ?? "-"), \(state), "
                    + "retains \(Self.bytes(slotStatus.retainedBytes)) of WAL")
            if slotStatus.retainedBytes > options.walWarningBytes {
                warnings.append(
                    "the slot retains \(Self.bytes(slotStatus.retainedBytes)), more than "
                        + "database.walWarningBytes (\(Self.bytes(options.walWarningBytes))). Start the daemon so it "
                        + "catches up, or drop the slot (SELECT pg_drop_replication_slot('\(slot)')) and load again; "
                        + "an abandoned slot fills the disk.")
            }
        } else {
            stream.append("Slot \(slot): does not exist (the daemon creates it; `realm-adapter load` will too)")
        }
        return DatabaseStatus(
            applied: applied, deadLetters: deadLetters, deadRows: deadRows,
            streaming: slotStatus?.active ?? false, streamName: "slot \(slot)", stream: stream,
            warnings: warnings, latestDeadLetters: latest.0, latestDeadRows: latest.1)
    }

    /// The newest dead letters of `adapter`, newest first.
    static func latestDeadLetters(_ s: PostgresSession, _ d: PostgresDialect, adapter: String) throws
        -> [DatabaseStatus.DeadLetter]
    {
        try latest(Self.deadLetterTable, "path, version", "instructions", "adapter", adapter, s, d).map { r in
            .init(path: r[0], version: Int64(r[1]) ?? 0, failedAt: r[2], error: r[3], instructions: r[4])
        }
    }

    /// The newest dead rows of the slot, newest first.
    static func latestDeadRows(_ s: PostgresSession, _ d: PostgresDialect, slot: String) throws
        -> [DatabaseStatus.DeadRow]
    {
        try latest(Self.deadRowTable, "table_name, position", "row_data", "slot", slot, s, d).map { r in
            .init(
                table: r[0], position: lsn(fromPosition: r[1])?.description ?? r[1], failedAt: r[2], error: r[3],
                row: r[4])
        }
    }

    /// The newest rows of a dead-letter or dead-row `table` whose `owner` column is `value`, newest
    /// first: the two columns that name each, the time (UTC), the error, and the start of `content`.
    private static func latest(
        _ table: String, _ names: String, _ content: String, _ owner: String, _ value: String, _ s: PostgresSession,
        _ d: PostgresDialect
    ) throws -> [[String]] {
        try s.query(
            d.statement(
                """
                SELECT \(raw: names), \(raw: utc("failed_at")), error,
                    left(\(raw: content)::text, \(raw: String(DatabaseStatus.excerptLength)))
                FROM \(table: table) WHERE \(id: owner) = \(value)
                ORDER BY id DESC LIMIT \(raw: String(DatabaseStatus.listed))
                """)
        ).rows.map { r in r.map { $0 ?? "" } }
    }

    /// A `timestamptz` column as a UTC time people read (`2026-11-29 05:36:52 UTC`).
    private static func utc(_ column: String) -> String {
        "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC'"
    }

    static func count(_ s: PostgresSession, _ statement: SQLStatement) throws -> Int {
        Int(try s.query(statement).rows[0][0] ?? "0") ?? 0
    }

    /// The state row that records `version` of `path` as in the database, in the same
    /// transaction as its writes (the exactly-once marker).
    static func marker(adapter: String, path: String, version: Int64, schema: String) -> SQLStatement {
        PostgresDialect(schema: schema).statement(
            """
            INSERT INTO \(table: stateTable) (adapter, path, version) VALUES (\(adapter), \(path), \(version))
            ON CONFLICT (adapter, path) DO UPDATE SET version = EXCLUDED.version, updated_at = now()
            """)
    }

    /// `1.5 GiB`.
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(n)
        var i = 0
        while v >= 1024 && i < units.count - 1 {
            v /= 1024
            i += 1
        }
        return i == 0 ? "\(n) B" : String(format: "%.1f", v) + " " + units[i]
    }

    /// The LSN (`0/16B3748`).
    public func describe(position: String) -> String {
        Self.lsn(fromPosition: position)?.description ?? position
    }

    /// An LSN from a position string written by this connector.
    public static func lsn(fromPosition position: String) -> LSN? {
        UInt64(position.prefix { $0 != ":" }, radix: 16).map(LSN.init)
    }
}
