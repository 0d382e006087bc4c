import Foundation
import PostgresConnector
import RealmAdapter
import Testing

extension PostgresIntegration {
    @Suite struct ReplicationTests {
        @Test(.timeLimit(.minutes(1)))
        func streamsTransactionsWithOriginsAndResumesAfterAcknowledge() async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in
                    try s.execute(
                        """
                        CREATE TABLE bus (id int PRIMARY KEY, plate text, seats smallint, price numeric, seen timestamptz,
                                          photo bytea, tags text[], note text);
                        ALTER TABLE bus ALTER COLUMN note SET STORAGE EXTERNAL;
                        CREATE TABLE other (id int PRIMARY KEY);
                        """)
                    try PostgresReplicationSetup.ensurePublication(s, name: "pub", schema: "public", tables: ["bus"])
                    try PostgresReplicationSetup.ensureOrigin(s, "realm_adapter_" + settings.database!)
                }
                let repl = try await PostgresConnection.connect(settings, replication: true)
                let (start, _) = try repl.sessionSync { try PostgresReplicationSetup.createSlot($0, "slot") }
                repl.close()

                try await pg.session { s in
                    try s.execute(
                        "INSERT INTO bus VALUES (1, 'AB-1', 40, 12.50, '2024-05-01 12:00:00.123456+02', '\\x00ff', '{a,\"b c\",NULL}', repeat('x', 10000))"
                    )
                    try s.execute("INSERT INTO other VALUES (1)")
                    // Our own write: tagged with the replication origin.
                    try s.transaction {
                        try s.query(
                            "SELECT pg_replication_origin_session_setup($1)", ["realm_adapter_" + settings.database!])
                        try s.execute("UPDATE bus SET seats = 41 WHERE id = 1")
                    }
                    try s.query("SELECT pg_replication_origin_session_reset()")
                    try s.execute("DELETE FROM bus WHERE id = 1")
                }

                let stream = try await PostgresReplicationStream(settings: settings, slot: "slot", publication: "pub")
                try stream.start(from: start)
                var received: [PostgresTransaction] = []
                for try await tx in stream.transactions {
                    stream.processed(tx)
                    // Postgres 15 skips transactions with nothing published (the insert into `other`).
                    if !tx.changes.isEmpty { received.append(tx) }
                    if received.count == 3 { break }
                }
                let changes = received
                guard case .insert("bus", let row) = changes[0].changes.first else {
                    Issue.record("expected an insert")
                    return
                }
                #expect(row["plate"] == "AB-1")
                #expect(row["seats"] == .int(40))
                #expect(row["price"] == .decimal("12.50"))  // the scale as written
                #expect(row["seen"] == .date(Timestamp(iso8601: "2024-05-01T10:00:00.123456Z")!))
                #expect(row["photo"] == .data(Data([0, 255])))
                #expect(row["tags"] == .list(["a", "b c", .null]))
                #expect(changes[0].origin == nil)
                #expect(changes[1].origin == "realm_adapter_" + settings.database!)
                // The unchanged TOASTed note is missing from the update, not null.
                guard case .update("bus", let updated, _) = changes[1].changes.first else {
                    Issue.record("expected an update")
                    return
                }
                #expect(updated.missing == ["note"])
                #expect(updated["note"] == nil, "an unchanged TOASTed value must not arrive as a value")
                guard case .delete("bus", let key) = changes[2].changes.first else {
                    Issue.record("expected a delete")
                    return
                }
                #expect(key["id"] == .int(1))
                let acknowledged = stream.acknowledged
                stream.stop()

                // Wait until the server has the flush position, then resume: nothing is replayed.
                for _ in 0..<100 {
                    let confirmed = try await pg.session { try PostgresReplicationSetup.slotStatus($0, "slot") }
                    if let c = confirmed?.confirmed, c >= received[2].endLSN, confirmed?.active == false { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await pg.session { s in try s.execute("INSERT INTO bus (id) VALUES (2)") }
                let again = try await PostgresReplicationStream(settings: settings, slot: "slot", publication: "pub")
                try again.start(from: acknowledged)
                for try await tx in again.transactions {
                    again.processed(tx)
                    if tx.changes.isEmpty { continue }
                    #expect(
                        tx.changes == [
                            .insert(
                                table: "bus",
                                row: DatabaseRow([
                                    "id": .int(2), "plate": .null, "seats": .null, "price": .null,
                                    "seen": .null, "photo": .null, "tags": .null, "note": .null,
                                ]))
                        ])
                    break
                }
                again.stop()
            }
        }

        @Test func aDroppedSlotIsAClearError() async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in
                    try s.execute("CREATE TABLE t (id int PRIMARY KEY)")
                    try PostgresReplicationSetup.ensurePublication(s, name: "pub", schema: "public", tables: ["t"])
                }
                let stream = try await PostgresReplicationStream(settings: settings, slot: "gone", publication: "pub")
                #expect {
                    try stream.start()
                } throws: { error in
                    let e = error as! PostgresError
                    // The server's own error is kept under the one that says what to do.
                    return e.code == .replicationSlot && e.sqlState == .undefinedObject
                        && (e.underlying as? PostgresError)?.code == .queryFailed
                        && e.message.contains("realm-adapter load")
                }
            }
        }
    }
}

extension PostgresIntegration.ReplicationTests {
    /// `database.resetReplicationSlot`: the daemon's start drops the slot and creates it anew
    /// at the current position (what was retained is given up); without it the slot stays.
    @Test(.timeLimit(.minutes(1)))
    func resetReplicationSlotStartsTheSlotOver() async throws {
        try await TestServer.withFreshDatabase { settings in
            let dir = NSTemporaryDirectory() + "realm-adapter-reset-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var config = try SyncHarness.config(settings, store: dir)
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            func slotStart() async throws -> String? {
                try await pg.session { s in
                    try s.query(
                        "SELECT restart_lsn::text FROM pg_replication_slots WHERE slot_name = $1", [settings.database!]
                    ).rows.first?[0]
                }
            }
            let mapping = try Mapping(config)
            try await PostgresConnector(configuration: config.database!, logger: .init(label: "test")).prepare(mapping)
            let first = try #require(try await slotStart())
            _ = try await pg.session { s in try s.query(#"INSERT INTO "Driver" (id) SELECT generate_series(1, 1000)"#) }
            try await PostgresConnector(configuration: config.database!, logger: .init(label: "test")).prepare(mapping)
            #expect(try await slotStart() == first, "without resetReplicationSlot the slot keeps its place")
            config.database!.postgres.resetReplicationSlot = true
            try await PostgresConnector(configuration: config.database!, logger: .init(label: "test")).prepare(mapping)
            let reset = try #require(try await slotStart())
            #expect(try #require(LSN(reset)) > (try #require(LSN(first))))
        }
    }
}
