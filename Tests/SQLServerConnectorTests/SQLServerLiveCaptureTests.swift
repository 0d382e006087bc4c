import ConnectorScenarios
import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

/// What only a real server shows about change capture: the app's own triggers, a load large
/// enough to take several rounds, the trigger log trimmed. Skipped unless `SQLSERVER_URL` is set.
@Suite(
    .serialized,
    .enabled(if: SQLServerScenarioDatabase.url != nil, "set SQLSERVER_URL=sqlserver://sa:…@host:1433 to run"))
struct SQLServerLiveCaptureTests {
    static func item(_ id: Int64, n: Int64) -> Instruction {
        .insert(objectType: "Item", identity: .int(id), values: ["id": .int(id), "n": .int(n), "note": .null])
    }

    /// A trigger of the app's that stamps rows: what it does to a row the daemon wrote comes back
    /// to the Realm (as change tracking reports the row as it is), and nothing else does.
    @Test(.timeLimit(.minutes(2))) func whatTheAppsOwnTriggerDoesComesBack() async throws {
        let db = try await SQLServerScenarioDatabase()
        do {
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
                        try h.realmItems() == [["0", "0", "first"], ["1", "10", "stamped"], ["2", "20", "stamped"]]
                    }
                }
                let origins = try h.history().map(\.origin)
                try require(origins.filter { $0 == "app" }.count == 1, "one app transaction: \(origins)")
            }
        } catch {
            await db.remove()
            throw error
        }
        await db.remove()
    }

    /// 10,000 rows loaded while the app writes, then the daemon: every row once, each as the
    /// database holds it, and the trigger log trimmed to what no daemon still needs.
    @Test(.timeLimit(.minutes(4))) func tenThousandRowsLoadAndHandOff() async throws {
        let db = try await SQLServerScenarioDatabase()
        do {
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
        } catch {
            await db.remove()
            throw error
        }
        await db.remove()
    }

    /// `teardown` removes what the daemon made (under triggers: the triggers first, then the log
    /// and the gate), refuses while a daemon runs, and the app's writes go on working after it.
    @Test(.timeLimit(.minutes(2))) func teardownRemovesWhatTheDaemonMade() async throws {
        let db = try await SQLServerScenarioDatabase()
        do {
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
        } catch {
            await db.remove()
            throw error
        }
        await db.remove()
    }
}
