import Foundation
import PostgresConnector
import RealmAdapter
import Synchronization
import TestSupport
import Testing

extension PostgresIntegration {
    /// Writers on both sides edit the same rows at once; once they stop, both sides are equal
    /// (the database's commit order decides, see `PendingWrites`).
    @Suite struct ConvergenceTests {
        static let schema =
            #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "a": "int", "b": "string?"}}]"#

        @Test(.timeLimit(.minutes(3)), arguments: [1, 2, 3, 4, 5])
        func concurrentEditsOfTheSameRowsConverge(seed: Int) async throws {
            try await SyncHarness.run(schema: Self.schema) { h in
                let ids = 1...12
                for i in ids { _ = try await h.sql(#"INSERT INTO "Item" VALUES ($1, 0, 'start')"#, [String(i)]) }
                try await eventually("the starting rows in the Realm") {
                    try h.object("Item", .int(Int64(ids.upperBound))) != nil
                }

                // At least 3 s of concurrent edits, and longer while either side has made 100 or
                // fewer (a busy machine), up to 30 s: the expectation below is on the counts.
                let writes = WriteCounts(until: ContinuousClock.now + .seconds(3))
                let settings = h.settings
                let database = Task {
                    var rng = SeededGenerator(seed: UInt64(seed))
                    let pg = try await PostgresConnection.connect(settings)
                    defer { pg.close() }
                    var n = 0
                    while writes.going() {
                        let id = String(Int.random(in: ids, using: &rng))
                        let v = String(Int.random(in: 0...999, using: &rng))
                        let sql: String =
                            switch Int.random(in: 0..<10, using: &rng) {
                            case 0: #"DELETE FROM "Item" WHERE id = $1 AND $2 <> ''"#
                            case 1: #"INSERT INTO "Item" VALUES ($1, $2::int, 'db-new') ON CONFLICT (id) DO NOTHING"#
                            case 2...5: #"UPDATE "Item" SET a = $2::int WHERE id = $1"#
                            default: #"UPDATE "Item" SET b = 'db-' || $2 WHERE id = $1"#
                            }
                        _ = try await pg.session { s in try s.query(sql, [id, v]) }
                        n += 1
                        writes.database.add(1, ordering: .relaxed)
                    }
                    return n
                }
                let realm = Task {
                    try await h.store.perform {
                        var rng = SeededGenerator(seed: UInt64(seed) &* 7919)
                        var n = 0
                        while writes.going() {
                            let id = Value.int(Int64(Int.random(in: ids, using: &rng)))
                            let v = Int64.random(in: 0...999, using: &rng)
                            let op = Int.random(in: 0..<10, using: &rng)
                            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                                let exists = try tx.object("Item", id) != nil
                                switch op {
                                case 0 where exists: try tx.delete("Item", id)
                                case 1 where !exists: try tx.create("Item", ["id": id, "a": .int(v), "b": "realm-new"])
                                case 2...5 where exists: try tx.update("Item", id, ["a": .int(v)])
                                case 6...9 where exists: try tx.update("Item", id, ["b": .string("realm-\(v)")])
                                default: break
                                }
                            }
                            n += 1
                            writes.realm.add(1, ordering: .relaxed)
                            usleep(500)
                        }
                        return n
                    }
                }
                let (dbWrites, realmWrites) = (try await database.value, try await realm.value)
                #expect(dbWrites > 100 && realmWrites > 100)

                func databaseRows() async throws -> [[String?]] {
                    try await h.sql(#"SELECT id, a, b FROM "Item" ORDER BY id"#)
                }
                func realmRows() throws -> [[String?]] {
                    try h.store.objects(of: "Item", in: "/SQLDemo").map { o in
                        [
                            o.identity.description, o.values["a"]!.description,
                            o.values["b"]!.isNull ? nil : o.values["b"]!.description,
                        ]
                    }
                }
                do {
                    try await eventually("both sides equal after the writers stopped", timeout: .seconds(30)) {
                        let d = try await databaseRows()
                        let r = try realmRows()
                        return d == r
                    }
                } catch {
                    let d = try await databaseRows()
                    let r = try realmRows()
                    let onlyDB = d.filter { !r.contains($0) }
                    let onlyRealm = r.filter { !d.contains($0) }
                    Issue.record("database only: \(onlyDB)\nRealm only: \(onlyRealm)")
                    throw error
                }
                // And they stay equal: nothing keeps bouncing between the sides.
                try await Task.sleep(for: .milliseconds(500))
                let d = try await databaseRows()
                #expect(d == (try realmRows()))
            }
        }
    }
}

extension PostgresIntegration.ConvergenceTests {
    /// The race the random test hits now and then, made to happen: the adapter's UPDATE for a
    /// Realm write waits on a row that a database transaction deletes and inserts again; the
    /// UPDATE then finds no row (the new one is not in its snapshot) yet commits after it. The
    /// database keeps its row, so the Realm must end with it too. The same for a Realm delete.
    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func aRealmWriteThatMissesARowInsertedMeanwhileYieldsToTheDatabase(deleting: Bool) async throws {
        try await SyncHarness.run(schema: Self.schema) { h in
            _ = try await h.sql(#"INSERT INTO "Item" VALUES (1, 0, 'start')"#)
            try await eventually("the row in the Realm") { try h.object("Item", 1) != nil }
            let other = try await PostgresConnection.connect(h.settings)
            defer { other.close() }
            _ = try await other.sql(#"BEGIN; SELECT 1 FROM "Item" WHERE id = 1 FOR UPDATE"#)
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                if deleting { try tx.delete("Item", 1) } else { try tx.update("Item", 1, ["b": "realm-x"]) }
            }
            try await eventually("the adapter's write waiting for the row") {
                try await h.sql(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ) == [["1"]]
            }
            _ = try await other.sql(
                #"DELETE FROM "Item" WHERE id = 1; INSERT INTO "Item" VALUES (1, 5, 'db-new'); COMMIT"#)
            try await eventually("both sides with the database's row") {
                let d = try await h.sql(#"SELECT a, b FROM "Item" WHERE id = 1"#)
                return try d == [["5", "db-new"]] && h.object("Item", 1)?.values["b"] == "db-new"
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try h.object("Item", 1)?.values["b"] == "db-new" && h.object("Item", 1)?.values["a"] == 5)
        }
    }
}

extension PostgresIntegration.ConvergenceTests {
    /// The same race for a list: the adapter rewrites a route's link rows while another
    /// transaction inserts one for it that the rewrite does not see, and commits first. The
    /// database then has that row too, so the Realm's list must end with it.
    @Test(.timeLimit(.minutes(1)))
    func aListRewriteThatMissesALinkRowInsertedMeanwhileYieldsToTheDatabase() async throws {
        try await SyncHarness.run(schema: PostgresIntegration.SyncTests.routeSchema) { h in
            _ = try await h.sql(
                #"INSERT INTO "Stop" VALUES (1, 'Depot'), (2, 'Mill'), (3, 'Quay'); INSERT INTO "Route" VALUES ('r1')"#)
            _ = try await h.sql(#"INSERT INTO "Route_stops" VALUES ('r1', 0, 1)"#)
            try await eventually("the route in the Realm") { try h.object("Route", "r1")?.values["stops"] == [1] }
            // A first Realm write makes the adapter's state row, which the test then holds.
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in try tx.update("Stop", 3, ["name": "Quay 1"]) }
            try await eventually("the first write in the database") {
                try await h.sql(#"SELECT name FROM "Stop" WHERE id = 3"#) == [["Quay 1"]]
            }
            let holder = try await PostgresConnection.connect(h.settings)
            let other = try await PostgresConnection.connect(h.settings)
            defer {
                holder.close()
                other.close()
            }
            _ = try await holder.sql("BEGIN; SELECT 1 FROM realm_adapter_state FOR UPDATE")
            _ = try await other.sql(#"BEGIN; INSERT INTO "Route_stops" VALUES ('r1', 5, 3)"#)
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in try tx.listInsert("Route", "r1", "stops", at: 1, 2)
            }
            try await eventually("the adapter's rewrite waiting for the state row") {
                try await h.sql(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ) == [["1"]]
            }
            _ = try await other.sql("COMMIT")
            _ = try await holder.sql("COMMIT")
            try await eventually("both sides with the database's list") {
                let rows = try await h.sql(#"SELECT target FROM "Route_stops" WHERE oid = 'r1' ORDER BY idx"#)
                return try rows == [["1"], ["2"], ["3"]] && h.object("Route", "r1")?.values["stops"] == [1, 2, 3]
            }
        }
    }
}

/// How many writes each side of ``ConvergenceTests`` made, and whether they go on.
final class WriteCounts: Sendable {
    let database = Atomic(0)
    let realm = Atomic(0)
    let until: ContinuousClock.Instant
    let limit: ContinuousClock.Instant

    init(until: ContinuousClock.Instant) {
        self.until = until
        limit = until + .seconds(27)
    }

    /// Until `until`, then while either side has made 100 writes or fewer, up to `limit`.
    func going() -> Bool {
        let now = ContinuousClock.now
        return now < until
            || (now < limit && min(database.load(ordering: .relaxed), realm.load(ordering: .relaxed)) <= 100)
    }
}
