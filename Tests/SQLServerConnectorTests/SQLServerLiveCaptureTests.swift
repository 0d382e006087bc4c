import ConnectorScenarios
import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

extension SQLServerLiveTests {
    /// What only a real server shows about change capture: the app's own triggers, a load
    /// large enough to take several rounds, the trigger log trimmed, teardown.
    @Suite struct CaptureTests {
        static func item(_ id: Int64, n: Int64) -> Instruction {
            .insert(objectType: "Item", identity: .int(id), values: ["id": .int(id), "n": .int(n), "note": .null])
        }

        /// A trigger of the app's that stamps rows: what it does to a row the daemon wrote comes back
        /// to the Realm (as change tracking reports the row as it is), and nothing else does.
        @Test(.timeLimit(.minutes(2))) func whatTheAppsOwnTriggerDoesComesBack() async throws {
            try await SQLServerScenarioDatabase.using { db in
                try await ScenarioHarness.run(db) { h in
                    try await h.withDaemon {}  // createSchema makes the table
                    _ = try await db.sql(
                        """
                        CREATE TRIGGER stamp ON "Item" AFTER INSERT AS
                        BEGIN SET NOCOUNT ON; UPDATE "Item" SET note = 'stamped' \
                        WHERE id IN (SELECT id FROM inserted) AND note IS NULL; END
                        """)
                    try await h.withDaemon {
                        _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (0, 0, 'first')"#)
                        try await eventually("the first row in the Realm") { try h.realmItems().count == 1 }
                        try h.realmWrite([Self.item(1, n: 10)])
                        try await eventually("the stamp in the Realm") {
                            try h.realmItems().last == ["1", "10", "stamped"]
                        }
                        _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (2, 20)"#)
                        try await eventually("the app's row, stamped, in the Realm") {
                            try h.realmItems() == [
                                ["0", "0", "first"], ["1", "10", "stamped"], ["2", "20", "stamped"],
                            ]
                        }
                    }
                    let origins = try h.history().map(\.origin)
                    try require(origins.filter { $0 == "app" }.count == 1, "one app transaction: \(origins)")
                }
            }
        }

        /// 10,000 rows loaded while the app writes, then the daemon: every row once, each as the
        /// database holds it, and the trigger log trimmed to what no daemon still needs.
        @Test(.timeLimit(.minutes(4))) func tenThousandRowsLoadAndHandOff() async throws {
            try await SQLServerScenarioDatabase.using { db in
                try await ScenarioHarness.run(db) { h in
                    try await h.withDaemon {}
                    for start in stride(from: 1, through: 10_000, by: 1_000) {
                        let values = (start..<start + 1_000).map { "(\($0), \($0), 'seed')" }.joined(separator: ", ")
                        _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES \#(values)"#)
                    }
                    let writer = Task {
                        for id in 20_001...20_050 {
                            _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (\#(id), \#(id), 'during')"#)
                            _ = try await db.sql(#"UPDATE "Item" SET n = n + 1 WHERE id = \#(id - 20_000)"#)
                        }
                    }
                    let summary = try await h.load()
                    try await writer.value
                    let rows = summary.tables.map(\.rows).reduce(0, +)
                    try require(rows >= 10_000, "the load read \(rows) rows")
                    try await h.withDaemon {
                        try await eventually("every row in the Realm", timeout: .seconds(60)) {
                            try h.realmItems().count == 10_050
                        }
                    }
                    let database = try await h.databaseItems()
                    try require(try h.realmItems() == database, "the Realm holds the rows as the database does")
                    if db.capture == .triggers {
                        let left = try await db.sql("SELECT COUNT(*) FROM realm_adapter_log")
                        try require(left == [["1"]], "the log trimmed to its last row: \(left)")
                    }
                }
            }
        }

        /// `teardown` removes what the daemon made (under triggers: the triggers first, then the log
        /// and the gate), refuses while a daemon runs, and the app's writes go on working after it.
        @Test(.timeLimit(.minutes(2))) func teardownRemovesWhatTheDaemonMade() async throws {
            try await SQLServerScenarioDatabase.using { db in
                try await ScenarioHarness.run(db) { h in
                    try await h.withDaemon {
                        _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (1, 1)"#)
                        try await eventually("the row in the Realm") { try h.realmItems().count == 1 }
                        await #expect(throws: SQLServerError.self) {
                            _ = try await h.connector().teardown(adapter: "scenario", dryRun: true)
                        }
                    }
                    let planned = try await h.connector().teardown(adapter: "scenario", dryRun: true)
                    let removed = try await h.connector().teardown(adapter: "scenario", dryRun: false)
                    try require(planned == removed, "the dry run lists what is removed: \(planned) vs \(removed)")
                    let own = [
                        "realm_adapter_poller", "realm_adapter_state", "realm_adapter_dead_letter",
                        "realm_adapter_dead_row",
                    ]
                    for table in own {
                        try require(removed.contains { $0.contains("[\(table)]") }, "\(table) in \(removed)")
                    }
                    if db.capture == .triggers {
                        try require(
                            removed.filter { $0.hasPrefix("capture trigger") }.count == 2, "two triggers: \(removed)")
                        try require(removed.contains { $0.contains("[realm_adapter_log]") }, "the log in \(removed)")
                    }
                    _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (2, 2)"#)
                    let left = try await db.sql("SELECT COUNT(*) FROM sys.triggers")
                    try require(left == [["0"]], "no trigger left: \(left)")
                    try require(
                        try await h.connector().teardown(adapter: "scenario", dryRun: false).isEmpty, "nothing left")
                }
            }
        }

        /// A Realm transaction of 2,000 objects reaches the database (its batches are far over
        /// 8,000 bytes: they were cut, "type big does not exist"), and the round that reads it
        /// back ends (it took minutes on Babelfish while the log's keys were cast in the join).
        @Test(.timeLimit(.minutes(3))) func aLargeRealmTransactionGoesAndComesBack() async throws {
            try await SQLServerScenarioDatabase.using { db in
                try await ScenarioHarness.run(db) { h in
                    try await h.withDaemon {
                        _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (0, 0, 'first')"#)
                        try await eventually("the first row in the Realm") { try h.realmItems().count == 1 }
                        let long = String(repeating: "Zoë 東京 ", count: 1_000)
                        try h.realmWrite(
                            (1...2_000).map {
                                .insert(
                                    objectType: "Item", identity: .int($0),
                                    values: ["id": .int($0), "n": .int($0 * 2), "note": .string($0 == 7 ? long : "r")])
                            })
                        try await eventually("2,000 rows in the database", timeout: .seconds(60)) {
                            try await db.sql(#"SELECT COUNT(*), SUM(n) FROM "Item""#) == [["2001", "4002000"]]
                        }
                        let note = try await db.sql(#"SELECT note FROM "Item" WHERE id = 7"#)
                        try require(note == [[long]], "the long note whole")
                        guard db.capture == .triggers else { return }
                        try await eventually("the round read back", timeout: .seconds(60)) {
                            try await db.sql(
                                "SELECT CASE WHEN (SELECT version FROM realm_adapter_poller) >= "
                                    + "(SELECT MAX(seq) FROM realm_adapter_log) THEN 1 ELSE 0 END") == [["1"]]
                        }
                    }
                }
            }
        }

        /// A capture trigger dropped while the daemon was stopped: `run` refuses (the writes in
        /// between were not recorded), and a full `load` heals it (it refused too, before).
        @Test(.timeLimit(.minutes(2))) func aFullLoadHealsADroppedTrigger() async throws {
            try await SQLServerScenarioDatabase.using { db in
                try await ScenarioHarness.run(db) { h in
                    guard db.capture == .triggers else { return }
                    try await h.withDaemon {
                        _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (1, 1)"#)
                        try await eventually("row 1 in the Realm") { try h.realmItems().count == 1 }
                    }
                    let names = try await db.sql(
                        "SELECT name FROM sys.triggers WHERE LOWER(OBJECT_NAME(parent_id)) = 'item'")
                    for case let name? in names.map(\.first).compactMap({ $0 }) {
                        _ = try await db.sql("DROP TRIGGER [\(name)]")
                    }
                    _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (2, 2)"#)
                    await #expect(throws: SQLServerError.self) { try await h.withDaemon {} }
                    _ = try await h.load()
                    try await h.withDaemon {
                        _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (3, 3)"#)
                        try await eventually("rows 1 to 3 in the Realm") { try h.realmItems().count == 3 }
                    }
                }
            }
        }

        static let shop = """
            [{"name": "Orders", "primaryKey": "id", "properties": {"id": "int", "customer": "Customer?", "placed": "date?"}},
             {"name": "Customer", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}}]
            """

        func orders(_ h: ScenarioHarness<SQLServerScenarioDatabase>) throws -> [[String?]] {
            guard try h.store.contains("/items") else { return [] }
            return try h.store.objects(of: "Orders", in: "/items").map { o in
                ["id", "customer", "placed"].map {
                    o.values[$0].flatMap(ScenarioHarness<SQLServerScenarioDatabase>.text)
                }
            }.sorted { Int($0[0]!)! < Int($1[0]!)! }
        }

        /// A parent and its child committed together reach the Realm parent first (a new user's
        /// trial stopped there for good: tables were read in name order), and a Realm write to
        /// a `datetimeoffset` column, a date or NULL, is taken (Babelfish refused both).
        @Test(.timeLimit(.minutes(2))) func parentsFirstAndDatetimeoffsetBothWays() async throws {
            try await SQLServerScenarioDatabase.using { db in
                _ = try await db.sql(
                    """
                    CREATE TABLE Customer (id bigint PRIMARY KEY, name nvarchar(100) NULL);
                    CREATE TABLE Orders (id bigint PRIMARY KEY, customer bigint NULL REFERENCES Customer (id),
                    placed datetimeoffset NULL);
                    """)
                try await ScenarioHarness.run(db, schema: Self.shop) { h in
                    try await h.withDaemon {
                        _ = try await db.sql(
                            """
                            BEGIN TRANSACTION; INSERT INTO Customer (id, name) VALUES (1, N'Zoë');
                            INSERT INTO Orders (id, customer, placed) VALUES (1, 1, '2024-05-01 10:00:00 +02:00');
                            COMMIT;
                            """)
                        try await eventually("the order, linked, in the Realm") {
                            try orders(h).first.map { Array($0.prefix(2)) } == ["1", "1"]
                        }
                        let placed = try orders(h)[0][2] ?? ""
                        try require(placed.hasPrefix("2024-05-01T08:00:00"), "10:00 +02:00 is 08:00 UTC: \(placed)")
                        try await h.store.apply(
                            [
                                .insert(
                                    objectType: "Customer", identity: .int(2), values: ["id": .int(2), "name": .null]),
                                .insert(
                                    objectType: "Orders", identity: .int(2),
                                    values: ["id": .int(2), "customer": .int(2), "placed": .null]),
                                .insert(
                                    objectType: "Orders", identity: .int(3),
                                    values: [
                                        "id": .int(3), "customer": .int(1),
                                        "placed": .date(Timestamp(iso8601: "2024-06-01T12:30:00.25Z")!),
                                    ]),
                            ], to: "/items", origin: "app")
                        try await eventually("the Realm's orders in the database") {
                            try await db.sql(
                                "SELECT id, customer, CONVERT(nvarchar(40), placed, 127) FROM Orders ORDER BY id"
                            ).count == 3
                        }
                        let rows = try await db.sql("SELECT id, customer, placed FROM Orders WHERE id > 1 ORDER BY id")
                        try require(rows.count == 2 && rows[0][2] == nil, "order 2 has no date: \(rows)")
                        let at = try await db.sql(
                            "SELECT CASE WHEN placed = '2024-06-01 12:30:00.25 +00:00' THEN 1 ELSE 0 END FROM Orders WHERE id = 3"
                        )
                        try require(at == [["1"]], "order 3 placed at 12:30:00.25 UTC: \(rows)")
                        _ = try await db.sql("UPDATE Orders SET customer = 2 WHERE id = 1")
                        try await eventually("the database's change in the Realm") { try orders(h)[0][1] == "2" }
                    }
                }
            }
        }
    }
}
