import Foundation
import PostgresConnector
import RealmAdapter
import Testing

@Suite(needsPostgres, .serialized) struct CrashTests {
    static let schema = #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "origin": "string"}}]"#

    /// Both sides write while the daemon is killed with SIGKILL at random points and restarted;
    /// afterwards both sides hold the same items, and nothing was applied twice.
    @Test(.timeLimit(.minutes(3)))
    func killedAtRandomPointsLosesNothingAndAppliesNothingTwice() async throws {
        try await TestServer.withFreshDatabase { settings in
            let dir = NSTemporaryDirectory() + "realm-adapter-crash-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let configFile = try SyncHarness.configFile(settings, store: dir + "/store", schema: Self.schema, directory: dir)
            let store = try RealmStore(directory: dir + "/store")
            // An adapter that never advances keeps the whole history for the checks at the end.
            _ = try Adapter(store: store, name: "audit", pathRegex: ".*")
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }

            var daemon = try DaemonProcess(config: configFile, log: dir + "/daemon-0.log")
            try await daemon.waitUntilSyncing()
            // Count every write the database receives per row, to catch a Realm transaction applied twice.
            try await pg.session { s in
                try s.execute("""
                    CREATE TABLE writes (id int PRIMARY KEY, count int NOT NULL);
                    CREATE FUNCTION count_write() RETURNS trigger AS $$ BEGIN
                      INSERT INTO writes VALUES (NEW.id, 1) ON CONFLICT (id) DO UPDATE SET count = writes.count + 1;
                      RETURN NEW; END $$ LANGUAGE plpgsql;
                    CREATE TRIGGER count_write AFTER INSERT OR UPDATE ON "Item" FOR EACH ROW EXECUTE FUNCTION count_write();
                    """)
            }

            let perSide = 1500
            // Database writer: ids 1..., each inserted once and updated once.
            let dbWriter = Task {
                let conn = try await PostgresConnection.connect(settings)
                defer { conn.close() }
                for i in 1...perSide {
                    try await conn.session { s in
                        try s.query(#"INSERT INTO "Item" (id, n, origin) VALUES ($1, 0, 'db')"#, [String(i)])
                        if i > 1 { try s.query(#"UPDATE "Item" SET n = n + 1 WHERE id = $1"#, [String(i - 1)]) }
                    }
                    if i % 25 == 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
            }
            // Realm writer: ids 100001..., from this process, while the daemon comes and goes.
            let realmWriter = Task.detached {
                for i in 1...perSide {
                    try store.write(to: "/SQLDemo", origin: "app") { tx in
                        if tx.schema[type: "Item"] == nil {
                            try tx.addType(ObjectSchema(name: "Item", primaryKey: "id", properties: [
                                Property(name: "id", type: .scalar(.int)), Property(name: "n", type: .scalar(.int)), Property(name: "origin", type: .scalar(.string))]))
                        }
                        try tx.create("Item", ["id": .int(Int64(100_000 + i)), "n": 0, "origin": "realm"])
                    }
                    if i % 25 == 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
            }

            var kills = 0
            for round in 1...4 {
                try await Task.sleep(for: .milliseconds(Int.random(in: 100...400)))
                daemon.kill9()
                kills += 1
                daemon = try DaemonProcess(config: configFile, log: dir + "/daemon-\(round).log")
                try await daemon.waitUntilSyncing()
            }
            let realmWhileKilling = try store.count(of: "Item", in: "/SQLDemo")
            try await dbWriter.value
            try await realmWriter.value

            // Let the last daemon catch up, then compare both sides.
            func databaseItems() async throws -> [[String?]] {
                try await pg.session { s in try s.query(#"SELECT id, n, origin FROM "Item" ORDER BY id"#).rows }
            }
            func realmItems() throws -> [[String?]] {
                guard try store.contains("/SQLDemo"), try store.schema(of: "/SQLDemo")[type: "Item"] != nil else { return [] }
                return try store.objects(of: "Item", in: "/SQLDemo").map { o in
                    [o.identity.description, o.values["n"]!.description, o.values["origin"]!.description]
                }
            }
            try await eventually("both sides to hold every item", timeout: .seconds(60)) {
                let d = try await databaseItems()
                let r = try realmItems()
                return d.count == 2 * perSide && r == d
            }
            #expect(daemon.terminate() == 0)
            #expect(kills == 4)
            // The kills fell while both sides were still writing.
            #expect(realmWhileKilling < 2 * perSide)

            // Nothing applied twice: each Realm item was written to the database exactly once,
            let counts = try await pg.session { s in try s.query("SELECT count(*) FROM writes WHERE id > 100000 AND count <> 1").rows }
            #expect(counts == [["0"]])
            // and each database insert became exactly one INSERT in the Realm.
            var inserted: [Value: Int] = [:]
            for tx in try store.history(of: "/SQLDemo") where tx.origin == "adapter:pg" {
                for case .insert("Item", let id, _) in tx.instructions { inserted[id, default: 0] += 1 }
            }
            #expect(inserted.count == perSide)
            #expect(inserted.values.allSatisfy { $0 == 1 })
        }
    }
}
