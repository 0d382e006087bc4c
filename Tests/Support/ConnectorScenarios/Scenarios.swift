import Foundation
import RealmAdapter

/// The core's sync scenarios, described once and run against every connector (SQLite in plain
/// `swift test`, Postgres against the test server): both directions, no echoes, convergence
/// under concurrent writers, exactly once across an abrupt stop, and the loader's hand-off
/// under concurrent writes. Each throws ``ScenarioFailure`` naming what did not hold.
public enum Scenarios {
    /// Every scenario, by name, for a test to run one by one.
    public static func all<D: ScenarioDatabase>(_: D.Type) -> [(String, @Sendable (D) async throws -> Void)] {
        [
            ("changes flow both ways, once, and never back", changesFlowBothWaysOnceAndNeverBack),
            ("concurrent writers converge", concurrentWritersConverge),
            ("exactly once across an abrupt stop", exactlyOnceAcrossAnAbruptStop),
            ("exactly once across crashes at the commit points", exactlyOnceAcrossCrashesAtTheCommitPoints),
            ("transactions that arrive together apply together", transactionsThatArriveTogetherApplyTogether),
            ("the load hands off exactly under concurrent writes", theLoadHandsOffExactlyUnderConcurrentWrites),
            ("transactions set aside are counted and the newest listed", setAsideTransactionsAreListed),
        ]
            + (D.writesConcurrently
                ? [("a slower transaction is never skipped", aSlowerTransactionIsNeverSkipped)] : [])
            + (D.keepsTransactionsApart
                ? [("event handlers see each database transaction", eventHandlersSeeEachDatabaseTransaction)] : [])
    }

    static func item(_ id: Int64, n: Int64, note: String? = nil) -> Instruction {
        .insert(
            objectType: "Item", identity: .int(id),
            values: ["id": .int(id), "n": .int(n), "note": note.map(Value.string) ?? .null])
    }

    static func set(_ id: Int64, n: Int64) -> Instruction {
        .set(objectType: "Item", identity: .int(id), values: ["n": .int(n)])
    }

    /// Inserts, updates and deletes made on either side reach the other side; the adapter's own
    /// writes never come back (the Realm gets no transaction for them).
    public static func changesFlowBothWaysOnceAndNeverBack<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            try await h.withDaemon {
                _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (1, 10, 'db')"#)
                try await eventually("row 1 in the Realm") { try h.realmItems() == [["1", "10", "db"]] }
                try h.realmWrite([item(2, n: 20, note: "realm")])
                try await eventually("object 2 in the database") { try await h.databaseItems().count == 2 }
                _ = try await db.sql(#"UPDATE "Item" SET n = 11 WHERE id = 1"#)
                try h.realmWrite([set(2, n: 21)])
                try await eventually("both updates on both sides") {
                    let want: [[String?]] = [["1", "11", "db"], ["2", "21", "realm"]]
                    let database = try await h.databaseItems()
                    return try h.realmItems() == want && database == want
                }
                _ = try await db.sql(#"DELETE FROM "Item" WHERE id = 2"#)
                try h.realmWrite([.delete(objectType: "Item", identity: .int(1))])
                try await eventually("both deletes on both sides") {
                    let database = try await h.databaseItems()
                    return try h.realmItems().isEmpty && database.isEmpty
                }
                // A last database row: the Realm transaction it makes must not go back (an echo
                // would record its version in the database's state table).
                _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (3, 30, 'db')"#)
                try await eventually("row 3 in the Realm") { try h.realmItems().count == 1 }
                // Let the stream bring the adapter's own writes back, if it were to.
                try await Task.sleep(for: .milliseconds(300))
            }
            let recorded = try await db.sql(
                "SELECT version FROM realm_adapter_state WHERE adapter = 'scenario' AND path = '/items'")
            let lastApp = try h.history().last { $0.origin == "app" }?.version
            try require(
                recorded == [[lastApp.map(String.init)]],
                "the database recorded the last app version \(String(describing: lastApp)), not \(recorded)")
            let history = try h.history()
            let fromDatabase = history.filter { $0.sourcePosition != nil }
            let fromApp = history.filter { $0.origin == "app" }
            try require(fromApp.count == 3, "three app transactions, found \(fromApp.count)")
            // Database → Realm: the first insert (with the type), the update, the delete, the last insert.
            try require(
                fromDatabase.count == 4,
                "four database transactions in the Realm, found \(fromDatabase.count): \(history)")
            let positions = fromDatabase.compactMap(\.sourcePosition?.position)
            try require(
                positions == positions.sorted() && Set(positions).count == positions.count,
                "positions once each, in order")
        }
    }

    /// The same object written on both sides at once, over and over: both sides end equal.
    public static func concurrentWritersConverge<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            try await h.withDaemon {
                _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (1, 0, 'both')"#)
                try await eventually("row 1 in the Realm") { try h.realmItems().count == 1 }
                for i in 1...20 {
                    async let database: [[String?]] = db.sql(#"UPDATE "Item" SET n = \#(i) WHERE id = 1"#)
                    try h.realmWrite([set(1, n: 1000 + Int64(i))])
                    _ = try await database
                }
                try await eventually("both sides equal") {
                    let (realm, database) = (try h.realmItems(), try await h.databaseItems())
                    return realm.count == 1 && database == realm
                }
            }
        }
    }

    /// Rows written while the daemon runs, stops abruptly, is down, and runs again: every one
    /// reaches the Realm exactly once, and every Realm write the database exactly once.
    public static func exactlyOnceAcrossAnAbruptStop<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            try await h.withDaemon(.crash) {
                for id in 1...15 { _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (\#(id), \#(id))"#) }
                try await eventually("some rows in the Realm") { try h.realmItems().count >= 5 }
                for id in 101...105 { try h.realmWrite([item(Int64(id), n: Int64(id))]) }
                // Stopped abruptly while changes are in flight.
            }
            for id in 16...30 { _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (\#(id), \#(id))"#) }
            for id in 106...110 { try h.realmWrite([item(Int64(id), n: Int64(id))]) }
            try await h.withDaemon {
                try await eventually("every row on both sides") {
                    let (realm, database) = (try h.realmItems(), try await h.databaseItems())
                    return realm.count == 40 && database == realm
                }
            }
            var inserted: [Value: Int] = [:]
            for tx in try h.history() where tx.sourcePosition != nil {
                for case .insert(_, let identity, _) in tx.instructions { inserted[identity, default: 0] += 1 }
            }
            try require(
                inserted.count == 30 && inserted.values.allSatisfy { $0 == 1 },
                "each database row inserted into the Realm once: \(inserted.filter { $0.value != 1 })")
        }
    }

    /// The daemon stops (as if killed) right after a database transaction is in the Realm but
    /// before the database is told, and right before a Realm transaction is written to the
    /// database: after each restart, every database transaction is in the Realm once, in commit
    /// order (a replay would write an older row over a newer one), and every Realm write reaches
    /// the database.
    public static func exactlyOnceAcrossCrashesAtTheCommitPoints<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            try await h.withDaemon {
                _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (1, 0, 'counter')"#)
                try await eventually("the counter in the Realm") { try h.realmItems().count == 1 }
            }
            // Database → Realm: stopped after the fourth commit of this run, unconfirmed. The
            // updates go on until it stops: how many commits they make depends on how the
            // connector and the daemon group them (a busy daemon applies together what arrived).
            var counter = 0
            let afterCommit = try await Failpoint.with("db-to-realm.after-commit=3*off->error") {
                try await h.withDaemon(.whenItStops) {
                    while !InProcessDaemon.hasStopped && counter < 500 {
                        counter += 1
                        _ = try await db.sql(#"UPDATE "Item" SET n = \#(counter) WHERE id = 1"#)
                        try await Task.sleep(for: .milliseconds(40))
                    }
                }
            }
            try require(
                (afterCommit as? RealmAdapterError)?.code == .failpoint,
                "stopped by the failpoint: \(String(describing: afterCommit))")
            // Realm → database: stopped before the third commit of this run (the writes go on until then).
            var written: Int64 = 0
            let beforeCommit = try await Failpoint.with("realm-to-db.before-commit=2*off->error") {
                try await h.withDaemon(.whenItStops) {
                    while !InProcessDaemon.hasStopped && written < 500 {
                        written += 1
                        try h.realmWrite([item(200 + written, n: 200 + written)])
                        try await Task.sleep(for: .milliseconds(30))
                    }
                }
            }
            try require(
                (beforeCommit as? RealmAdapterError)?.code == .failpoint,
                "stopped by the failpoint: \(String(describing: beforeCommit))")
            try await h.withDaemon {
                try await eventually("both sides equal, the counter at its last value") {
                    let (realm, database) = (try h.realmItems(), try await h.databaseItems())
                    return realm.count == 1 + Int(written) && realm.first == ["1", String(counter), "counter"]
                        && database == realm
                }
            }
            let positions = try h.history().compactMap(\.sourcePosition?.position)
            try require(
                positions == positions.sorted() && Set(positions).count == positions.count,
                "each database transaction once, in commit order: \(positions)")
        }
    }

    /// Database transactions committed while the daemon is stopped arrive together when it
    /// starts, and are applied together (fewer store transactions, so a daemon that falls behind
    /// catches up): every row once, the recorded positions in commit order.
    public static func transactionsThatArriveTogetherApplyTogether<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            try await h.withDaemon {
                _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (0, 0)"#)
                try await eventually("the first row in the Realm") { try h.realmItems().count == 1 }
            }
            for id in 1...40 { _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (\#(id), \#(id))"#) }
            try await h.withDaemon {
                try await eventually("every row in the Realm") { try h.realmItems().count == 41 }
            }
            let applied = try h.history().filter { $0.sourcePosition != nil }
            let together = applied.count - 1
            try require(together < 40, "40 transactions that arrived together in fewer Realm ones: \(together)")
            let positions = applied.compactMap(\.sourcePosition?.position)
            try require(
                positions == positions.sorted() && Set(positions).count == positions.count,
                "positions in commit order: \(positions)")
            try require(try h.realmItems().map { $0[1] } == (0...40).map { String($0) }, "each row as committed")
        }
    }

    /// A transaction that wrote first and commits last reaches the Realm: a reader that follows
    /// numbers drawn when rows change (a trigger log's sequence) must not take a later commit's
    /// number as the point below which it has seen everything.
    public static func aSlowerTransactionIsNeverSkipped<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            try await h.withDaemon {
                _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (0, 0)"#)
                try await eventually("the first row in the Realm") { try h.realmItems().count == 1 }
                let commit = try await db.openTransaction(#"INSERT INTO "Item" (id, n) VALUES (1, 1)"#)
                // The faster one may wait for the slower (a shared lock): it runs on its own.
                let faster = Task { try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (2, 2)"#) }
                try await Task.sleep(for: .milliseconds(600))  // rounds run while the slower one is open
                try await commit()
                _ = try await faster.value
                try await eventually("both rows in the Realm") {
                    try h.realmItems().map { $0[0] } == ["0", "1", "2"]
                }
            }
        }
    }

    /// With an event handler (or webhook) following the Realms, transactions that arrive together
    /// are applied one by one: merged, a row inserted in one and deleted in the next would leave
    /// no change at all, and the handler would never hear of it (a probe's webhook missed orders
    /// placed and cancelled while the daemon was busy).
    public static func eventHandlersSeeEachDatabaseTransaction<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            try await h.withDaemon {
                _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (0, 0)"#)
                try await eventually("the first row in the Realm") { try h.realmItems().count == 1 }
            }
            let events = try Adapter(store: h.store, name: "events", pathRegex: "^/items$", recordsChanges: true)
            for id in 1...20 {
                _ = try await db.sql(#"INSERT INTO "Item" (id, n) VALUES (\#(id), \#(id))"#)
                _ = try await db.sql(#"DELETE FROM "Item" WHERE id = \#(id)"#)
            }
            _ = try await db.sql(#"UPDATE "Item" SET n = 99 WHERE id = 0"#)
            try await h.withDaemon {
                try await eventually("the last change in the Realm") { try h.realmItems() == [["0", "99", nil]] }
            }
            var inserted = 0
            while let tx = try events.current("/items") {
                let changes = try h.store.changeSet(of: tx, in: "/items")
                inserted += changes.types.reduce(0) { $0 + $1.inserted.count }
                try events.advance("/items")
            }
            try require(inserted == 20, "the handler sees each of the 20 rows inserted: \(inserted)")
        }
    }

    /// Rows inserted and updated while the load reads its snapshot: after it, the daemon brings
    /// exactly what the snapshot missed, so both sides end equal with no row twice.
    public static func theLoadHandsOffExactlyUnderConcurrentWrites<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            // The tables exist before the load (createSchema runs when the connector prepares).
            try await h.withDaemon {}
            for start in stride(from: 1, through: 400, by: 100) {
                let values = (start..<start + 100).map { "(\($0), \($0), 'seed')" }.joined(separator: ", ")
                _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES \#(values)"#)
            }
            let writer = Task {
                for id in 1001...1100 {
                    _ = try await db.sql(#"INSERT INTO "Item" (id, n, note) VALUES (\#(id), \#(id), 'during')"#)
                    _ = try await db.sql(#"UPDATE "Item" SET n = n + 1 WHERE id = \#(id - 1000)"#)
                }
            }
            let summary = try await h.load()
            try await writer.value
            try require(summary.handOffPosition != nil, "the load is a hand-off point")
            try await h.withDaemon {
                try await eventually("both sides equal") {
                    let (realm, database) = (try h.realmItems(), try await h.databaseItems())
                    return realm.count == 500 && database == realm
                }
            }
        }
    }

    /// Realm transactions the database rejected, moved to its dead letters (`dead-letter`,
    /// `ignoreSQLErrors`): `status` counts them all and lists the newest, each with its Realm,
    /// version, time, the database's error and its instructions, whatever their text holds.
    public static func setAsideTransactionsAreListed<D: ScenarioDatabase>(_ db: D) async throws {
        try await ScenarioHarness.run(db) { h in
            let connector = try h.connector()
            _ = try await connector.prepare(h.mapping)
            let count = Int64(DatabaseStatus.listed + 2)
            for v in 1...count {
                try await connector.deadLetter(
                    [item(v, n: v, note: "<b>'\"\\ é 𝄞")], error: "rejected \(v): \"it\" <b>", adapter: "scenario",
                    path: "/items", version: v)
            }
            let status = try await connector.statusReport(adapter: "scenario")
            await connector.shutdown()
            try require(status.deadLetters == Int(count), "\(status.deadLetters) dead letters counted")
            let listed = status.latestDeadLetters
            try require(
                listed.map(\.version) == Array((3...count).reversed()), "listed newest first: \(listed.map(\.version))")
            try require(
                listed.allSatisfy { $0.path == "/items" && $0.failedAt.hasSuffix(" UTC") },
                "each with its Realm and time: \(listed.first.map { "\($0)" } ?? "none")")
            try require(
                listed.first?.error == "rejected 12: \"it\" <b>", "the error as written: \(listed.first?.error ?? "")")
            guard case .array(let items) = try JSONValue(parsing: listed.first?.instructions ?? "") else {
                throw ScenarioFailure(description: "instructions not a JSON array: \(listed.first?.instructions ?? "")")
            }
            let instructions = try items.map { try Instruction(json: $0) }
            guard instructions.count == 1, case .insert("Item", .int(count), let values) = instructions[0] else {
                throw ScenarioFailure(description: "not the one insert: \(instructions)")
            }
            try require(
                values["n"] == .int(count) && values["note"] == .string("<b>'\"\\ é 𝄞"),
                "the instructions' values as written: \(listed.first?.instructions ?? "")")
            try require(status.applied["/items"] == count, "each marked applied: \(status.applied)")
        }
    }
}
