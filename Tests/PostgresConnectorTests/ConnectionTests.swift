import Foundation
import Logging
import RealmAdapter
import Testing

@testable import PostgresConnector

extension PostgresIntegration {
    @Suite struct ConnectionTests {
        @Test func queriesWithParametersAndReportsServerErrors() async throws {
            let pg = try await PostgresConnection.connect(TestServer.settings)
            defer { pg.close() }
            let r = try await pg.session { s in
                try s.query("SELECT $1::int + 1 AS n, $2::text IS NULL AS isnull", ["41", nil])
            }
            #expect(r.columns == ["n", "isnull"])
            #expect(r.rows == [["42", "t"]])
            await #expect {
                try await pg.session { s in try s.query("SELECT * FROM no_such_table") }
            } throws: { error in
                let e = error as! PostgresError
                return e.code == .queryFailed && e.sqlState == .undefinedTable && e.message.contains("no_such_table")
            }
            // The connection is still usable after an error.
            #expect(try await pg.session { s in try s.query("SELECT 1").rows } == [["1"]])
        }

        /// Binary parameters carry what text cannot: a NUL byte, and bytes as they are.
        @Test func binaryParametersCarryBytesTextCannot() async throws {
            let pg = try await PostgresConnection.connect(TestServer.settings)
            defer { pg.close() }
            let bytes = Data([0x00, 0xFF, 0x00, 0x41])
            let r = try await pg.session { s in
                try s.query(
                    "SELECT length($1::bytea), encode($1::bytea, 'hex'), $2::int8 * 2, $3::text IS NULL, length($4::bytea)",
                    parameters: [.binary(bytes), .text("21"), nil, .binary(Data())])
            }
            #expect(r.rows == [["4", "00ff0041", "42", "t", "0"]])
        }

        /// A result streamed row by row arrives whole and in order; a consumer that stops early
        /// leaves the connection usable.
        @Test func rowsStreamOneAtATimeAndStoppingEarlyKeepsTheConnection() async throws {
            let pg = try await PostgresConnection.connect(TestServer.settings)
            defer { pg.close() }
            let (count, sum) = try await pg.session { s in
                var (count, sum) = (0, 0)
                try s.forEachRow("SELECT n FROM generate_series(1, $1::int) n", parameters: [.text("100000")]) { row in
                    count += 1
                    sum += Int(row[0]!)!
                }
                return (count, sum)
            }
            #expect(count == 100_000 && sum == 100_000 * 100_001 / 2)
            struct Enough: Error {}
            await #expect(throws: Enough.self) {
                try await pg.session { s in
                    try s.forEachRow("SELECT n FROM generate_series(1, 10000000) n") { row in
                        if row[0] == "10" { throw Enough() }
                    }
                }
            }
            #expect(try await pg.session { s in try s.query("SELECT 1").rows } == [["1"]])
            await #expect(throws: PostgresError.self) {
                try await pg.session { s in try s.forEachRow("SELECT * FROM no_such_table") { _ in } }
            }
        }

        /// A notification sent on another connection reaches a session listening on its channel;
        /// with none, the wait ends at its timeout.
        @Test func notificationsReachAListenerAndAWaitEndsAtItsTimeout() async throws {
            let listener = try await PostgresConnection.connect(TestServer.settings)
            let sender = try await PostgresConnection.connect(TestServer.settings)
            defer {
                listener.close()
                sender.close()
            }
            try await listener.session { s in try s.listen("realm commits") }
            let started = ContinuousClock.now
            #expect(try await listener.session { s in try s.notifications(waitingUpTo: .milliseconds(200)) }.isEmpty)
            #expect(ContinuousClock.now - started >= .milliseconds(190))
            try await sender.session { s in
                try s.query("SELECT pg_notify('realm commits', $1)", ["/u1 7"])
                try s.query("SELECT pg_notify('elsewhere', 'x')")
            }
            let got = try await listener.session { s in try s.notifications(waitingUpTo: .seconds(5)) }
            #expect(got.map(\.channel) == ["realm commits"] && got.map(\.payload) == ["/u1 7"])
        }

        @Test func connectionErrorsNameTheTargetAndNotThePassword() async throws {
            var s = TestServer.settings
            s.port = 1  // nothing listens there
            s.password = Secret("hunter2")
            s.connectTimeout = 2
            await #expect {
                try await PostgresConnection.connect(s)
            } throws: { error in
                let text = "\(error)"
                return (error as? PostgresError)?.code == .connectionFailed && text.contains("127.0.0.1:1")
                    && !text.contains("hunter2")
            }
        }

        @Test func transactionsRollBackOnError() async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in try s.execute("CREATE TABLE t (id int PRIMARY KEY)") }
                await #expect(throws: PostgresError.self) {
                    try await pg.session { s in
                        try s.transaction {
                            try s.query("INSERT INTO t VALUES ($1)", ["1"])
                            try s.query("INSERT INTO t VALUES ($1)", ["1"])
                        }
                    }
                }
                #expect(try await pg.session { s in try s.query("SELECT count(*) FROM t").rows } == [["0"]])
            }
        }
    }
}

@Suite struct PostgresWritesTests {
    func up(_ id: Int64, _ name: String = "x") -> DatabaseWrite {
        .upsert(table: "t", keyColumns: ["id"], row: DatabaseRow(["id": .int(id), "name": .string(name)]))
    }

    @Test func runsBecomeOneStatementWithTheirRowsAsOneJSONParameterUnlessAKeyRepeats() {
        let planned = PostgresWrites.statements(
            [up(1), up(2), up(3), up(2, "again"), .delete(table: "t", key: DatabaseRow(["id": 9])), up(4)],
            schema: "public", bulkTables: ["t": [:]])
        #expect(
            planned.map(\.statement.text) == [
                #"INSERT INTO "public"."t" ("id", "name") SELECT v."id", v."name" FROM json_populate_recordset(NULL::"public"."t", $1) v ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name""#,
                #"INSERT INTO "public"."t" ("id", "name") VALUES ($1, $2) ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name""#,
                #"DELETE FROM "public"."t" WHERE "id" = $1"#,
                #"INSERT INTO "public"."t" ("id", "name") VALUES ($1, $2) ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name""#,
            ])
        #expect(
            planned[0].statement.values == [
                .string(#"[{"id":"1","name":"x"},{"id":"2","name":"x"},{"id":"3","name":"x"}]"#)
            ] && planned[0].statement.write == nil)
        #expect(
            planned[1].statement.values == [2, "again"] && planned[1].statement.write != nil, "a lone write is carried")
    }

    @Test func updatesAndDeletesInARunReturnWhichRowsTheyFound() {
        func set(_ id: Int64) -> DatabaseWrite {
            .update(
                table: "t", key: DatabaseRow(["id": .int(id)]),
                values: DatabaseRow(["name": "n", "qty": .null, "doc": "[1]"]))
        }
        let planned = PostgresWrites.statements(
            [
                set(1), set(2), .delete(table: "t", key: DatabaseRow(["id": 1])),
                .delete(table: "t", key: DatabaseRow(["id": 2])),
            ],
            schema: "s", bulkTables: ["t": ["doc": "jsonb"]])
        #expect(
            planned.map(\.statement.text) == [
                #"UPDATE "s"."t" t SET "doc" = (v."doc" #>> '{}')::jsonb, "name" = v."name", "qty" = v."qty" FROM json_array_elements($1) WITH ORDINALITY e(doc, n) CROSS JOIN LATERAL json_populate_record(NULL::"s"."t", e.doc) v WHERE t."id" = v."id" RETURNING e.n"#,
                #"DELETE FROM "s"."t" t USING json_array_elements($1) WITH ORDINALITY e(doc, n) CROSS JOIN LATERAL json_populate_record(NULL::"s"."t", e.doc) v WHERE t."id" = v."id" RETURNING e.n"#,
            ])
        #expect(
            planned[0].statement.values == [
                .string(#"[{"doc":"[1]","id":"1","name":"n","qty":null},{"doc":"[1]","id":"2","name":"n","qty":null}]"#)
            ])
        // The second row was not found: it is the one to read again.
        let result = PostgresResult(columns: ["ordinality"], rows: [["1"]], affected: 1)
        #expect(planned[0].missedRows(result) == [RowReference(table: "t", key: DatabaseRow(["id": 2]))])
        #expect(
            planned[1].missedRows(PostgresResult(columns: ["ordinality"], rows: [["2"], ["1"]], affected: 2)) == [])
    }

    @Test func valuesReferringToOtherRowsGoAsAValuesListOrOneByOne() {
        var row = DatabaseRow(["id": 1, "owner": "realm-id-1"])
        row.references["owner"] = KeyReference(table: "o", column: "pk", byColumn: "rid")
        var second = row
        second["id"] = 2
        let upserts = PostgresWrites.statements(
            [.upsert(table: "t", keyColumns: ["id"], row: row), .upsert(table: "t", keyColumns: ["id"], row: second)],
            schema: "public")
        #expect(
            upserts.count == 1
                && upserts[0].statement.text.contains(
                    #"VALUES ($1, (SELECT "pk" FROM "public"."o" WHERE "rid" = $2)), ($3, (SELECT"#)
        )
        let inserts = PostgresWrites.statements(
            [.insert(table: "t", row: row), .insert(table: "t", row: second)], schema: "public", bulkTables: ["t": [:]])
        #expect(inserts.count == 2 && inserts.allSatisfy { $0.statement.write != nil })
        // A table the catalog did not list (not there when the connector looked): a VALUES list.
        let unknown = PostgresWrites.statements([up(1), up(2)], schema: "public")
        #expect(unknown.count == 1 && unknown[0].statement.text.contains("VALUES ($1, $2), ($3, $4)"))
    }
}

extension PostgresIntegration.ConnectionTests {
    /// `database.createDatabase` creates a missing database before anything else.
    @Test func createDatabaseCreatesAMissingDatabase() async throws {
        var settings = TestServer.settings
        let name = "t_created_" + UUID().uuidString.prefix(6).lowercased()
        settings.database = name
        let dir = NSTemporaryDirectory() + "realm-adapter-createdb-\(UUID().uuidString.prefix(6))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = try SyncHarness.config(
            settings, store: dir, schema: #"[{"name": "Note", "primaryKey": "id", "properties": {"id": "int"}}]"#)
        config.database!.createDatabase = true
        let connector = PostgresConnector(configuration: config.database!, logger: Logger(label: "test"))
        try await connector.prepare(try Mapping(config))
        await connector.shutdown()
        let pg = try await PostgresConnection.connect(settings)
        #expect(try await pg.session { s in try s.query("SELECT to_regclass('\"Note\"') IS NOT NULL").rows } == [["t"]])
        pg.close()
        await TestServer.drop(name)
    }
}

extension PostgresIntegration.ConnectionTests {
    /// `database.sslmode` reaches libpq: against a server with TLS (its own throwaway cluster
    /// with a self-signed certificate), `require` encrypts, and `verify-full` without the CA
    /// refuses with the server named and libpq's reason.
    @Test(.timeLimit(.minutes(1)))
    func sslmodeReachesTheServer() async throws {
        try await OwnCluster.with("tls") { cluster in
            let data = cluster.directory + "/data"
            try OwnCluster.shell(
                "openssl req -new -x509 -days 1 -nodes -subj /CN=localhost -keyout '\(data)/server.key' -out '\(data)/server.crt'"
            )
            if getuid() == 0 { try OwnCluster.shell("chown postgres: '\(data)/server.key' '\(data)/server.crt'") }
            try OwnCluster.shell("chmod 600 '\(data)/server.key'")
            let settings = cluster.settings
            let admin = try await PostgresConnection.connect(settings)
            try await admin.session { s in
                try s.execute("ALTER SYSTEM SET ssl = on")
                try s.query("SELECT pg_reload_conf()")
            }
            admin.close()
            try await Task.sleep(for: .milliseconds(300))

            var tls = settings
            tls.sslmode = "require"
            let pg = try await PostgresConnection.connect(tls)
            defer { pg.close() }
            #expect(
                try await pg.session { s in try s.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows
                } == [["t"]])

            var strict = settings
            strict.sslmode = "verify-full"
            await #expect {
                _ = try await PostgresConnection.connect(strict)
            } throws: { e in
                let text = "\(e)"
                return text.contains("127.0.0.1:\(cluster.port)") && text.contains("root certificate")
            }
        }
    }
}
