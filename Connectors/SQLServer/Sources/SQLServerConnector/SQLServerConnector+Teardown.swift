import RealmAdapter

extension SQLServerConnector {
    /// What `realm-adapter teardown` removes: this daemon's resume point, its adapter's rows of
    /// the state and dead-letter tables, and each of those tables once no other has a row in it;
    /// the capture triggers, the change log and the gate once no daemon's resume point is left.
    /// The mapped tables and their data stay, and change tracking stays as it is (other
    /// readers may use it). With `dryRun`, the same list, and nothing removed.
    public func teardown(adapter: String, dryRun: Bool) async throws -> [String] {
        let c = try await SQLServerConnection.connect(settings, logger: logger)
        defer { c.close() }
        let (d, name) = (dialect, options.trackingName)
        return try await c.session { s in
            try s.execute(SQLServerConnector.sessionSettings)
            let free = try s.query(
                SQLStatement(
                    "SELECT APPLOCK_TEST('public', @p1, 'Exclusive', 'Session')", [.string(self.lockResource)])
            ).rows.first?.first
            guard free == .int(1) else { throw SQLServerError.daemonRunningAtTeardown(name) }
            var removed: [String] = []
            func remove(_ what: String, _ statement: String) throws {
                if !dryRun { try s.execute(statement) }
                removed.append(what)
            }
            let flags = try s.query(SQLServerSQL.ownTablesExisting(d)).rows.first ?? []
            let exists = Set(zip(SQLServerSQL.ownTables, flags).filter { $0.1 == .int(1) }.map(\.0))
            func count(_ table: String, _ column: String, _ op: String, _ owner: String) throws -> Int64 {
                guard exists.contains(table) else { return 0 }
                let sql = d.statement(
                    "SELECT COUNT_BIG(*) FROM \(table: table) WHERE \(id: column) \(raw: op) \(owner)")
                if case .int(let n)? = try s.query(sql).rows.first?.first { return n }
                return 0
            }
            // The capture serves every daemon of the database: it goes with the last one, and
            // its triggers first (they write to the log and the gate, and go with their tables).
            if try count(SQLServerSQL.pollerTable, "adapter", "<>", name) == 0 {
                var triggers: [(table: String, name: String)] = []
                try s.query(SQLServerTriggers.installed(d)) { _, r in
                    if case .string(let t) = r[0], case .string(let n) = r[1] { triggers.append((t, n)) }
                }
                for t in triggers {
                    try remove(
                        "capture trigger \(t.name) on \(d.table(t.table))",
                        "DROP TRIGGER \(d.quote(d.schema)).\(d.quote(t.name));")
                }
                for table in [SQLServerTriggers.logTable, SQLServerTriggers.gateTable] {
                    let found = try s.query(
                        SQLStatement("SELECT OBJECT_ID(@p1, N'U');", [.string(d.table(table))])
                    ).rows.first?.first
                    if let found, found != .null {
                        try remove("table \(d.table(table))", "DROP TABLE \(d.table(table));")
                    }
                }
            }
            for (table, column, owner) in [
                (SQLServerSQL.pollerTable, "adapter", name), (SQLServerSQL.stateTable, "adapter", adapter),
                (SQLServerSQL.deadLetterTable, "adapter", adapter), (SQLServerSQL.deadRowTable, "adapter", name),
            ] where exists.contains(table) {
                let (mine, others) = (try count(table, column, "=", owner), try count(table, column, "<>", owner))
                if others == 0 {
                    try remove(
                        "table \(d.table(table)) (\(mine) row(s) of this adapter)", "DROP TABLE \(d.table(table));")
                } else if mine > 0 {
                    try remove(
                        "\(mine) row(s) of \(d.table(table)) (others keep theirs, and the table)",
                        "DELETE FROM \(d.table(table)) WHERE \(d.quote(column)) = N'\(SQLServerTriggers.literal(owner))';"
                    )
                }
            }
            return removed
        }
    }
}

extension SQLServerError {
    /// `teardown` while a daemon of the same `trackingName` runs.
    static func daemonRunningAtTeardown(_ name: String) -> SQLServerError {
        SQLServerError(
            .invalidSettings,
            "A daemon with trackingName \(name) is running against this database: stop it first, then run "
                + "`realm-adapter teardown` again.")
    }
}
