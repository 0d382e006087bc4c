import RealmAdapter

/// `realm-adapter status` for SQL Server.
extension SQLServerConnector {
    public func statusReport(adapter: String) async throws -> DatabaseStatus {
        let c = try await connection(\.writer)
        let (d, name) = (dialect, options.trackingName)
        let tables =
            (state.withLock { $0.mapping }).map { m in Self.followed(m).map(\.name) } ?? []
        let (applied, letters, rows, setup, saved, current) = try await c.session {
            s -> ([String: Int64], Int, Int, SQLServerSetup.State, Int64?, Int64) in
            var applied: [String: Int64] = [:]
            try s.query(
                d.statement("SELECT path, version FROM \(table: SQLServerSQL.stateTable) WHERE adapter = \(adapter)")
            ) { _, r in if case .string(let p) = r[0], case .int(let v) = r[1] { applied[p] = v } }
            func count(_ sql: SQLStatement) throws -> Int {
                if case .int(let n)? = try s.query(sql).rows.first?.first { return Int(n) }
                return 0
            }
            let letters = try count(
                d.statement(
                    "SELECT COUNT_BIG(*) FROM \(table: SQLServerSQL.deadLetterTable) WHERE adapter = \(adapter)"))
            let rows = try count(
                d.statement("SELECT COUNT_BIG(*) FROM \(table: SQLServerSQL.deadRowTable) WHERE adapter = \(name)"))
            let saved = try s.query(
                d.statement("SELECT version FROM \(table: SQLServerSQL.pollerTable) WHERE adapter = \(name)")
            ).rows.first?.first
            let current = try SQLServerChangeReader.version(s, d)
            if case .int(let v)? = saved {
                return (applied, letters, rows, try SQLServerSchema.setupState(s), v, current)
            }
            return (applied, letters, rows, try SQLServerSchema.setupState(s), nil, current)
        }
        let lock = try await SQLServerConnection.connect(settings, logger: logger)
        let free = try await lock.session { s in
            try s.query(
                SQLStatement(
                    "SELECT APPLOCK_TEST('public', @p1, 'Exclusive', 'Session')", [.string("realm-adapter:" + name)])
            ).rows.first?.first == .int(1)
        }
        lock.close()
        let streaming = !free || state.withLock { $0.lock != nil }
        var stream = [
            "Change tracking: the database is at version \(current); the Realms hold "
                + (saved.map { "version \($0) (\(current - $0) behind)" } ?? "nothing yet (run `realm-adapter load`)")
                + ", " + (streaming ? "a daemon follows it" : "no daemon running")
        ]
        let problems = SQLServerSetup.problems(
            setup, database: settings.database ?? "", schema: configuration.schema, tables: tables)
        stream += problems.map { "Setup: " + $0 }
        return DatabaseStatus(
            applied: applied, deadLetters: letters, deadRows: rows, streaming: streaming,
            streamName: "change tracking (\(name))", stream: stream, warnings: problems)
    }
}
