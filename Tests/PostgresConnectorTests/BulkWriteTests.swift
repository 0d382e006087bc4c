import Foundation
import RealmAdapter
import Testing

@testable import PostgresConnector

extension PostgresIntegration {
    /// Runs of writes travel as one JSON parameter (`json_populate_recordset`); each value must
    /// land exactly as the one-statement-per-write path (text parameters) lands it, and the
    /// rows an update or delete did not find must be the ones named for reading again.
    @Suite struct BulkWriteTests {
        static let columns = """
            id int8 PRIMARY KEY, name text, qty int4, small int2, price float8, ratio float4, active bool,
            photo bytea, at timestamptz, day date, amount numeric(12, 4), token uuid, tags text[], counts int8[],
            mood mood, label short_text, doc jsonb, ordinality int4
            """

        /// Values Postgres parses in ways worth checking: quotes, backslashes, newlines and
        /// non-ASCII in text and arrays, NULL inside arrays, infinities, tiny and negative
        /// numbers, bytes that are not UTF-8, time zones, a numeric's scale.
        static func row(_ i: Int64) -> [String: Value] {
            let texts = ["plain", #"quo"te"#, #"back\slash"#, "line\nbreak\ttab", "naïve ☃ 😀", "", "{a,b}", "NULL"]
            let doubles: [Double] = [0.1, -1e-300, .infinity, -.infinity, 1e300, 123_456.789]
            return [
                "id": .int(i), "name": .string(texts[Int(i) % texts.count]), "qty": .int(i * 7 - 20),
                "small": .int(i % 2 == 0 ? 32767 : -32768), "price": .double(doubles[Int(i) % doubles.count]),
                "ratio": .float(Float(i) / 3), "active": .bool(i % 2 == 0),
                "photo": .data(Data([0, 0xFF, 0x5C, 0x22, UInt8(i % 256)])),
                "at": .date(Timestamp(seconds: 1_700_000_000 + i * 3_601, nanoseconds: Int32(i % 1000) * 1_000_000)),
                "day": .date(Timestamp(seconds: 86_400 * (19_000 + i), nanoseconds: 0)),
                "amount": .decimal(DecimalNumber(exactly: "\(i).5000")!),
                "token": .uuid(UUID(uuidString: "5E1D6A7C-0000-4000-8000-00000000000\(i % 10)")!),
                "tags": .list([.string(texts[Int(i) % texts.count]), .null, .string(#"a"b\c"#)]),
                "counts": .list([.int(i), .int(-i)]), "mood": .string(i % 2 == 0 ? "happy" : "sad"),
                "label": .string("L\(i)"), "doc": .string(#"{"k": [1, "two", null]}"#), "ordinality": .int(i),
            ]
        }

        /// A fresh database with tables `one` and `second` of ``columns`` (and their types); `body`
        /// gets the connection, the tables that take runs as JSON, and a table's rows by id.
        static func withTables(
            _ second: String,
            _ body: (PostgresConnection, [String: [String: String]], (String) async throws -> [[String?]]) async throws
                -> Void
        ) async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in
                    try s.execute(
                        """
                        CREATE TYPE mood AS ENUM ('happy', 'sad');
                        CREATE DOMAIN short_text AS text CHECK (length(VALUE) < 10);
                        CREATE TABLE one (\(Self.columns));
                        CREATE TABLE \(second) (\(Self.columns));
                        """)
                }
                let bulkTables = try await pg.session { s in
                    try PostgresSchema.bulkTables(["one", second], schema: "public", s)
                }
                try await body(pg, bulkTables) { table in
                    try await pg.session { s in try s.query("SELECT * FROM \(table) ORDER BY id").rows }
                }
            }
        }

        @Test func eachValueLandsAsTheOneByOnePathLandsItAndMissedRowsAreNamed() async throws {
            try await Self.withTables("bulk") { pg, bulkTables, rows in
                #expect(bulkTables == ["one": ["doc": "jsonb"], "bulk": ["doc": "jsonb"]])
                func apply(_ writes: [DatabaseWrite]) async throws -> [PostgresWrites.Planned] {
                    let planned = PostgresWrites.statements(writes, schema: "public", bulkTables: bulkTables)
                    try await pg.session { s in
                        try s.transaction { for p in planned { try s.query(p.statement) } }
                    }
                    return planned
                }
                func upserts(_ table: String, _ ids: ClosedRange<Int64>) -> [DatabaseWrite] {
                    ids.map { .upsert(table: table, keyColumns: ["id"], row: DatabaseRow(Self.row($0))) }
                }

                // Inserts, then updates of the same rows through upserts, then SETs, then deletes.
                for w in upserts("one", 1...40) { _ = try await apply([w]) }
                let inserted = try await apply(upserts("bulk", 1...40))
                #expect(inserted.count == 1 && inserted[0].statement.text.contains("json_populate_recordset"))
                #expect(try await rows("bulk") == rows("one"))
                #expect(try await rows("bulk").count == 40)

                var changed = upserts("one", 1...40).map { w -> DatabaseWrite in
                    guard case .upsert(let t, let k, var row, _) = w, case .int(let id)? = row["id"] else { return w }
                    row["name"] = .string("renamed \(id) \\ \"")
                    row["tags"] = .null
                    return .upsert(table: t, keyColumns: k, row: row)
                }
                for w in changed { _ = try await apply([w]) }
                changed = changed.map {
                    guard case .upsert(_, let k, let row, _) = $0 else { return $0 }
                    return .upsert(table: "bulk", keyColumns: k, row: row)
                }
                _ = try await apply(changed)
                #expect(try await rows("bulk") == rows("one"))

                func set(_ table: String, _ id: Int64) -> DatabaseWrite {
                    .update(
                        table: table, key: DatabaseRow(["id": .int(id)]),
                        values: DatabaseRow([
                            "qty": .null, "amount": .decimal(DecimalNumber(exactly: "-0.0001")!),
                            "photo": .data(Data()),
                        ]))
                }
                for id in Int64(1)...45 { _ = try await apply([set("one", id)]) }
                let updated = try await apply((Int64(1)...45).map { set("bulk", $0) })
                #expect(try await rows("bulk") == rows("one"))
                // Rows 41 to 45 do not exist: those five, and only they, are to be read again.
                let found = try await pg.session { s in
                    try s.transaction { try s.query(updated[0].statement) }
                }
                #expect(
                    updated[0].missedRows(found)
                        == (Int64(41)...45).map { RowReference(table: "bulk", key: DatabaseRow(["id": .int($0)])) })

                let deletes = [3, 99, 5].map { DatabaseWrite.delete(table: "bulk", key: DatabaseRow(["id": .int($0)])) }
                let deleted = PostgresWrites.statements(deletes, schema: "public", bulkTables: bulkTables)
                let result = try await pg.session { s in try s.transaction { try s.query(deleted[0].statement) } }
                #expect(deleted[0].missedRows(result) == [RowReference(table: "bulk", key: DatabaseRow(["id": 99]))])
                #expect(try await rows("bulk").map { $0[0] }.contains("3") == false)
            }
        }

        /// Long runs of upserts go as `COPY` in a savepoint (``CopyRun``): each value lands as the
        /// one-by-one path lands it, and a run with a key already taken falls back to the upsert
        /// it stands for, in the same transaction.
        @Test func copiedRunsLandAsTheOneByOnePathAndFallBackOnATakenKey() async throws {
            try await Self.withTables("copied") { pg, bulkTables, rows in
                func apply(_ writes: [DatabaseWrite]) async throws -> [PostgresWrites.Planned] {
                    let planned = PostgresWrites.statements(
                        writes, schema: "public", bulkTables: bulkTables, copyRows: PostgresConnector.copyRows)
                    try await pg.session { s in try s.transaction { _ = try PostgresConnector.run(planned, s) } }
                    return planned
                }
                func upserts(_ table: String, _ ids: ClosedRange<Int64>, renamed: Bool = false) -> [DatabaseWrite] {
                    ids.map {
                        var row = Self.row($0)
                        if renamed { row["name"] = .string("renamed \($0) \\N \t \\") }
                        return .upsert(table: table, keyColumns: ["id"], row: DatabaseRow(row))
                    }
                }

                for w in upserts("one", 1...80) { _ = try await apply([w]) }
                let copied = try await apply(upserts("copied", 1...80))
                #expect(copied.count == 1 && copied[0].copy?.rows == 80)
                #expect(try await rows("copied") == rows("one"))

                // Rows 41 to 80 exist: the COPY fails, and the upsert writes all 80.
                for w in upserts("one", 41...120, renamed: true) { _ = try await apply([w]) }
                let second = try await apply(upserts("copied", 41...120, renamed: true))
                #expect(second.count == 1 && second[0].copy != nil)
                #expect(try await rows("copied") == rows("one"))
                #expect(try await rows("copied").count == 120)
                // Shorter runs go as before.
                #expect(
                    PostgresWrites.statements(
                        upserts("copied", 1...63), schema: "public", bulkTables: bulkTables,
                        copyRows: PostgresConnector.copyRows)[0].copy == nil)
            }
        }

        /// A `COPY` run is sent in pieces of 64 KiB as it is encoded: pieces end anywhere, inside a
        /// row, an escape or a character of several bytes, and every row still lands whole.
        @Test func aCopyRunOfManyPiecesLandsWhole() async throws {
            try await Self.withTables("copied") { pg, bulkTables, rows in
                let names = (Int64(1)...600).map { i in
                    String(repeating: "☃", count: 100 + Int(i % 7)) + "\t\\\n\r é \(i)"
                        + String(repeating: "x", count: Int(i % 3))
                }
                let writes = zip(Int64(1)...600, names).map { i, name in
                    DatabaseWrite.upsert(
                        table: "copied", keyColumns: ["id"], row: DatabaseRow(["id": .int(i), "name": .string(name)]))
                }
                let planned = PostgresWrites.statements(
                    writes, schema: "public", bulkTables: bulkTables, copyRows: PostgresConnector.copyRows)
                #expect(planned.count == 1 && planned[0].copy?.rows == 600)
                var pieces: [[UInt8]] = []
                try planned[0].copy?.write { pieces.append(Array($0)) }
                #expect(pieces.count >= 3 && pieces.dropLast().allSatisfy { $0.count >= 1 << 16 })
                #expect(pieces.joined().split(separator: UInt8(ascii: "\n")).count == 600)
                try await pg.session { s in try s.transaction { _ = try PostgresConnector.run(planned, s) } }
                #expect(try await rows("copied").map { $0[1] } == names)
            }
        }

        /// Statements sent in pipeline mode (groups of 64, one round trip each) give their results in
        /// order; a failure in the middle is the error thrown, the rest of its group is skipped, the
        /// transaction rolls back whole, and the connection stays usable.
        @Test func aPipelineAnswersInOrderAndFailsAtItsFirstError() async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in try s.execute("CREATE TABLE t (id int8 PRIMARY KEY)") }
                let inserts = (1...200).map {
                    SQLStatement("INSERT INTO t VALUES ($1) RETURNING id", [.int(Int64($0))])
                }
                let results = try await pg.session { s in try s.transaction { try s.pipeline(inserts) { $0 == 70 } } }
                #expect(results.map { $0.rows } == (1...200).map { [[String($0)]] })
                let failing = (201...400).map {
                    SQLStatement("INSERT INTO t VALUES ($1)", [.int($0 == 331 ? 7 : Int64($0))])
                }
                await #expect {
                    try await pg.session { s in try s.transaction { try s.pipeline(failing) } }
                } throws: { error in
                    "\(error)".contains("duplicate key value violates unique constraint")
                        && "\(error)".contains("t_pkey")
                }
                #expect(
                    try await pg.session { s in try s.query("SELECT count(*), max(id) FROM t").rows } == [
                        ["200", "200"]
                    ])
                // Each statement text was prepared once on this connection, and run prepared after.
                let prepared = try await pg.session { s in
                    try s.query("SELECT statement FROM pg_prepared_statements ORDER BY 1").rows.compactMap { $0[0] }
                }
                #expect(prepared == ["INSERT INTO t VALUES ($1)", "INSERT INTO t VALUES ($1) RETURNING id"])
                // A statement that cannot be prepared fails with the database's own message.
                await #expect {
                    try await pg.session { s in
                        try s.pipeline([
                            SQLStatement("INSERT INTO t VALUES ($1)", [500]),
                            SQLStatement("INSERT INTO t (nope) VALUES ($1)", [501]),
                        ])
                    }
                } throws: { error in
                    "\(error)".contains(#"column "nope" of relation "t" does not exist"#)
                }
            }
        }

        /// A value a column cannot take fails the whole run's statement with the database's own
        /// message, as it fails a statement of its own (the sync then applies the batch's Realm
        /// transactions one by one and names the one that failed).
        @Test func aBadValueInARunFailsItsStatementWithTheDatabasesMessage() async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in try s.execute("CREATE TABLE t (id int8 PRIMARY KEY, label varchar(3))") }
                let writes = ["ok", "far too long", "ok"].enumerated().map { i, label in
                    DatabaseWrite.upsert(
                        table: "t", keyColumns: ["id"],
                        row: DatabaseRow(["id": .int(Int64(i)), "label": .string(label)]))
                }
                let planned = PostgresWrites.statements(writes, schema: "public", bulkTables: ["t": [:]])
                #expect(planned.count == 1)
                await #expect {
                    try await pg.session { s in try s.transaction { for p in planned { try s.query(p.statement) } } }
                } throws: { error in
                    "\(error)".contains("value too long for type character varying(3)")
                }
                #expect(try await pg.session { s in try s.query("SELECT count(*) FROM t").rows } == [["0"]])
            }
        }
    }
}
