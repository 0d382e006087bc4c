import RealmAdapter

/// `realm-adapter status` for SQL Server.
extension SQLServerConnector {
    /// Reads, never creates: on a database that no `run` or `load` prepared (the connector's
    /// tables missing, change tracking off) it reports the setup problems, which `status`
    /// shows as warnings (exit code 2), instead of failing on the first missing table.
    public func statusReport(adapter: String) async throws -> DatabaseStatus {
        let c = try await connection(\.writer)
        let (d, name) = (dialect, options.trackingName)
        let tables =
            (state.withLock { $0.mapping }).map { m in Self.followed(m).map(\.name) + [SQLServerSQL.stateTable] }
            ?? []
        let (read, capture) = try await c.session { s in
            let capture = try self.capture(s)
            return (try Self.statusRead(s, d, adapter: adapter, name: name, capture: capture), capture)
        }
        let lock = try await SQLServerConnection.connect(settings, logger: logger)
        let free = try await lock.session { s in
            try s.query(
                SQLStatement(
                    "SELECT APPLOCK_TEST('public', @p1, 'Exclusive', 'Session')", [.string(self.lockResource)])
            ).rows.first?.first == .int(1)
        }
        lock.close()
        let streaming = !free || state.withLock { $0.lock != nil }
        let daemon = streaming ? "a daemon follows it" : "no daemon running"
        var stream: [String]
        let what = capture == .tracking ? "Change tracking: the database is at version" : "Triggers: the log is at"
        if let current = read.current {
            stream = [
                "\(what) \(current); the Realms hold "
                    + (read.saved.map {
                        "\(capture == .tracking ? "version" : "number") \($0) (\(current - $0) behind)"
                    }
                        ?? "nothing yet (run `realm-adapter load`)") + ", " + daemon
            ]
        } else if capture == .tracking {
            stream = ["Change tracking: off for the database (see Setup), " + daemon]
        } else {
            stream = ["Triggers: no change log yet (`realm-adapter load` or `run` creates it), " + daemon]
        }
        var problems = SQLServerSetup.problems(
            read.setup, database: settings.database ?? "", schema: configuration.schema, tables: tables,
            capture: capture)
        if capture == .triggers {
            problems += tables.filter { !read.captured.contains(SQLServerSchema.key($0)) }.map {
                "no capture trigger on table \($0); `realm-adapter load` installs it (changes made without it "
                    + "are not in the Realms)"
            }
        }
        stream += problems.map { "Setup: " + $0 }
        return DatabaseStatus(
            applied: read.applied, deadLetters: read.letters, deadRows: read.rows, streaming: streaming,
            streamName: "\(capture == .tracking ? "change tracking" : "triggers") (\(name))", stream: stream,
            warnings: problems, latestDeadLetters: read.latestLetters, latestDeadRows: read.latestRows)
    }

    /// What `status` reads in one session.
    struct StatusRead {
        var applied: [String: Int64] = [:]
        var letters = 0
        var rows = 0
        var latestLetters: [DatabaseStatus.DeadLetter] = []
        var latestRows: [DatabaseStatus.DeadRow] = []
        var setup = SQLServerSetup.State(databaseTracked: false, snapshotIsolation: false, trackedTables: [])
        /// The resume point, if one was saved.
        var saved: Int64?
        /// The change-tracking version, if change tracking is on for the database (under triggers,
        /// the log's last number, if the log exists).
        var current: Int64?
        /// Under triggers, the tables with a capture trigger (by ``SQLServerSchema/key(_:)``).
        var captured: Set<String> = []
    }

    /// Reads the connector's tables only where they exist and the version only where change
    /// tracking is on (`CHANGE_TRACKING_CURRENT_VERSION()` answers NULL, or does not exist, elsewhere).
    static func statusRead(
        _ s: SQLServerSession, _ d: SQLServerDialect, adapter: String, name: String,
        capture: ChangeCapture = .tracking
    ) throws -> StatusRead {
        var out = StatusRead()
        let flags = try s.query(SQLServerSQL.ownTablesExisting(d)).rows.first ?? []
        let exists = Set(zip(SQLServerSQL.ownTables, flags).filter { $0.1 == .int(1) }.map(\.0))
        func text(_ v: Value) -> String {
            switch v {
            case .string(let s): s
            case .null: ""
            default: "\(v)"
            }
        }
        func count(_ sql: SQLStatement) throws -> Int {
            if case .int(let n)? = try s.query(sql).rows.first?.first { return Int(n) }
            return 0
        }
        if exists.contains(SQLServerSQL.stateTable) {
            try s.query(SQLServerSQL.appliedVersions(adapter: adapter, d)) { _, r in
                if case .string(let p) = r[0], case .int(let v) = r[1] { out.applied[p] = v }
            }
        }
        if exists.contains(SQLServerSQL.deadLetterTable) {
            out.letters = try count(
                d.statement(
                    "SELECT COUNT_BIG(*) FROM \(table: SQLServerSQL.deadLetterTable) WHERE adapter = \(adapter)"))
            if out.letters > 0 {
                try s.query(
                    SQLServerSQL.latest(SQLServerSQL.deadLetterTable, "path, version", "instructions", adapter, d)
                ) {
                    _, r in
                    let t = r.map(text)
                    out.latestLetters.append(
                        .init(path: t[0], version: Int64(t[1]) ?? 0, failedAt: t[2], error: t[3], instructions: t[4]))
                }
            }
        }
        if exists.contains(SQLServerSQL.deadRowTable) {
            out.rows = try count(
                d.statement("SELECT COUNT_BIG(*) FROM \(table: SQLServerSQL.deadRowTable) WHERE adapter = \(name)"))
            if out.rows > 0 {
                try s.query(SQLServerSQL.latest(SQLServerSQL.deadRowTable, "table_name, position", "row_data", name, d))
                {
                    _, r in
                    let t = r.map(text)
                    out.latestRows.append(.init(table: t[0], position: t[1], failedAt: t[2], error: t[3], row: t[4]))
                }
            }
        }
        if exists.contains(SQLServerSQL.pollerTable),
            case .int(let v)? = try s.query(
                d.statement("SELECT version FROM \(table: SQLServerSQL.pollerTable) WHERE adapter = \(name)")
            ).rows.first?.first
        {
            out.saved = v
        }
        out.setup = try SQLServerSchema.setupState(s)
        if capture == .triggers {
            let log = try s.query(
                SQLStatement("SELECT OBJECT_ID(@p1, N'U');", [.string(d.table(SQLServerTriggers.logTable))]))
            if let id = log.rows.first?.first, id != .null {
                out.current = try SQLServerTriggerReader.number(s, SQLServerTriggers.lastNumber(d))
            }
            out.captured = try SQLServerTriggerReader.captured(s, d)
        } else if out.setup.databaseTracked,
            case .int(let v)? = try s.query(SQLStatement("SELECT CHANGE_TRACKING_CURRENT_VERSION();")).rows.first?
                .first
        {
            out.current = v
        }
        return out
    }
}
