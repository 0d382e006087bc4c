import RealmAdapter

extension PostgresConnector {
    /// What `realm-adapter teardown` removes: this adapter's replication slot, publication and
    /// replication origins (which outlive a dropped slot and database otherwise), its rows of
    /// the state and dead-letter tables, and each of those tables once no other adapter has a
    /// row in it. The mapped tables and their data stay. With `dryRun`, the same list, and
    /// nothing removed.
    public func teardown(adapter: String, dryRun: Bool) async throws -> [String] {
        let pg = try await PostgresConnection.connect(settings, logger: logger)
        defer { pg.close() }
        let (slot, publication, d) = (options.slotName, options.publication, dialect)
        let origins = [originName, idsOriginName]
        return try await pg.session { s in
            var removed: [String] = []
            func remove(_ what: String, _ statement: () throws -> Void) throws {
                if !dryRun { try statement() }
                removed.append(what)
            }
            func exists(_ sql: String, _ name: String) throws -> Bool { try !s.query(sql, [name]).rows.isEmpty }
            if let status = try PostgresReplicationSetup.slotStatus(s, slot) {
                guard !status.active else { throw PostgresError.slotInUseByTeardown(slot) }
                try remove("replication slot \(slot)") { try PostgresReplicationSetup.dropSlot(s, slot) }
            }
            if try exists("SELECT 1 FROM pg_publication WHERE pubname = $1", publication) {
                try remove("publication \(publication)") {
                    try s.query(d.statement("DROP PUBLICATION \(id: publication)"))
                }
            }
            for o in origins where try exists("SELECT 1 FROM pg_replication_origin WHERE roname = $1", o) {
                try remove("replication origin \(o)") { try s.query("SELECT pg_replication_origin_drop($1)", [o]) }
            }
            for (table, column, owner) in [
                (Self.stateTable, "adapter", adapter), (Self.deadLetterTable, "adapter", adapter),
                (Self.deadRowTable, "slot", slot),
            ] {
                guard try s.query("SELECT to_regclass($1) IS NOT NULL", [d.table(table)]).rows == [["t"]] else {
                    continue
                }
                let mine = try Self.count(
                    s, d.statement("SELECT count(*) FROM \(table: table) WHERE \(id: column) = \(owner)"))
                let others = try Self.count(
                    s, d.statement("SELECT count(*) FROM \(table: table) WHERE \(id: column) <> \(owner)"))
                if others == 0 {
                    try remove("table \(d.table(table)) (\(mine) row(s) of this adapter)") {
                        try s.query(d.statement("DROP TABLE \(table: table)"))
                    }
                } else if mine > 0 {
                    try remove("\(mine) row(s) of \(d.table(table)) (other adapters keep theirs, and the table)") {
                        try s.query(d.statement("DELETE FROM \(table: table) WHERE \(id: column) = \(owner)"))
                    }
                }
            }
            return removed
        }
    }
}
