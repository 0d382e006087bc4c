import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    @Suite struct CrashTests {
        static let schema =
            #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "origin": "string"}}]"#
        static let itemType = ObjectSchema(
            name: "Item", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.int)), Property(name: "n", type: .scalar(.int)),
                Property(name: "origin", type: .scalar(.string)),
            ])
        /// Writes items 100001… to /SQLDemo from this process, one transaction each, counting them.
        static func realmWriter(_ store: RealmStore, items: Int, written: Counter) -> Task<Void, any Error> {
            Task {
                try await store.perform {
                    for i in 1...items {
                        try store.write(to: "/SQLDemo", origin: "app") { tx in
                            if tx.schema[type: "Item"] == nil { try tx.addType(itemType) }
                            try tx.create("Item", ["id": .int(Int64(100_000 + i)), "n": 0, "origin": "realm"])
                        }
                        written.set(i)
                        if i % 10 == 0 { usleep(10_000) }
                    }
                }
            }
        }
        /// Counts every write the database receives per row, to catch a Realm transaction applied twice.
        static let countWrites = """
            CREATE TABLE writes (id int PRIMARY KEY, count int NOT NULL);
            CREATE FUNCTION count_write() RETURNS trigger AS $$ BEGIN
              INSERT INTO writes VALUES (NEW.id, 1) ON CONFLICT (id) DO UPDATE SET count = writes.count + 1;
              RETURN NEW; END $$ LANGUAGE plpgsql;
            CREATE TRIGGER count_write AFTER INSERT OR UPDATE ON "Item" FOR EACH ROW EXECUTE FUNCTION count_write();
            """

        /// Both sides write while the daemon is killed with SIGKILL at random points and restarted;
        /// afterwards both sides hold the same items, and nothing was applied twice.
        /// On both stores: a daemon on the Postgres store, killed, leaves nothing half-applied there.
        @Test(.timeLimit(.minutes(3)), arguments: StoreKind.allCases)
        func killedAtRandomPointsLosesNothingAndAppliesNothingTwice(_ kind: StoreKind) async throws {
            try await TestServer.withFreshDatabase { settings in
                let dir = try DaemonProcess.directory()
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let testStore = try await TestStore(kind, in: dir)
                let configFile = try SyncHarness.configFile(
                    settings, store: testStore.location, schema: Self.schema, directory: dir)
                let store = testStore.store
                // An adapter that never advances keeps the whole history for the checks at the end.
                _ = try Adapter(store: store, name: "audit", pathRegex: ".*")
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }

                var daemon = try DaemonProcess(config: configFile, log: dir + "/daemon-0.log")
                try await daemon.waitUntilSyncing()
                try await pg.session { s in try s.execute(Self.countWrites) }

                let perSide = 1500
                let (dbWritten, realmWritten) = (Counter(), Counter())
                // Database writer: ids 1..., each inserted once and updated once, and a token
                // inserted and deleted in each transaction (applied twice, it would be inserted twice).
                let dbWriter = Task {
                    let conn = try await PostgresConnection.connect(settings)
                    defer { conn.close() }
                    for i in 1...perSide {
                        try await conn.session { s in
                            try s.transaction {
                                try s.query(#"INSERT INTO "Item" (id, n, origin) VALUES ($1, 0, 'db')"#, [String(i)])
                                try s.query(
                                    #"INSERT INTO "Item" (id, n, origin) VALUES ($1, 0, 'token')"#, [String(-i)])
                                try s.query(#"DELETE FROM "Item" WHERE id = $1"#, [String(-i)])
                                if i > 1 { try s.query(#"UPDATE "Item" SET n = n + 1 WHERE id = $1"#, [String(i - 1)]) }
                            }
                        }
                        dbWritten.set(i)
                        if i % 10 == 0 { try await Task.sleep(for: .milliseconds(10)) }
                    }
                }
                // Realm writer: ids 100001..., from this process, while the daemon comes and goes.
                let realmWriter = Self.realmWriter(store, items: perSide, written: realmWritten)

                // How far each writer had got at each kill.
                var atKills: [(db: Int, realm: Int)] = []
                for round in 1...4 {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 100...400)))
                    daemon.kill9()
                    atKills.append((dbWritten.value, realmWritten.value))
                    daemon = try DaemonProcess(config: configFile, log: dir + "/daemon-\(round).log")
                    try await daemon.waitUntilSyncing()
                }
                try await dbWriter.value
                try await realmWriter.value

                // Let the last daemon catch up, then compare both sides.
                func databaseItems() async throws -> [[String?]] {
                    try await pg.session { s in try s.query(#"SELECT id, n, origin FROM "Item" ORDER BY id"#).rows }
                }
                func realmItems() throws -> [[String?]] {
                    guard try store.contains("/SQLDemo"), try store.schema(of: "/SQLDemo")[type: "Item"] != nil else {
                        return []
                    }
                    return try store.objects(of: "Item", in: "/SQLDemo").map { o in
                        [o.identity.description, o.values["n"]!.description, o.values["origin"]!.description]
                    }
                }
                try await eventually("both sides to hold every item", timeout: .seconds(60)) {
                    let d = try await databaseItems()
                    let r = try realmItems()
                    return d.count == 2 * perSide && r == d
                }
                let exit = await daemon.terminate()
                #expect(exit == 0, Comment(rawValue: crashReport(daemon.log)))
                // The first two kills fell while both sides were still writing (later ones may not).
                #expect(
                    atKills.prefix(2).allSatisfy { $0.db < perSide && $0.realm < perSide },
                    "writers at the kills: \(atKills)")

                // Nothing applied twice: each Realm item was written to the database exactly once,
                let counts = try await pg.session { s in
                    try s.query("SELECT count(*) FROM writes WHERE id > 100000 AND count <> 1").rows
                }
                #expect(counts == [["0"]])
                // and each database transaction is in the Realm's history once, in order (positions
                // increasing, each token inserted once).
                #expect(try GuaranteeWorkload.problems(store) == [])
                await testStore.remove()
            }
        }
    }
}

extension PostgresIntegration.CrashTests {
    /// `realm-adapter status` shows each Realm's progress and warns about retained WAL.
    @Test(.timeLimit(.minutes(1)))
    func statusShowsProgressAndWarnsAboutRetainedWAL() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, configFile) = try DaemonProcess.workspace(settings, schema: Self.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let daemon = try DaemonProcess(config: configFile, log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            try await pg.session { s in _ = try s.query(#"INSERT INTO "Item" VALUES (1, 0, 'db')"#) }
            let store = try RealmStore(directory: dir + "/store")
            try await eventually("item 1 in the Realm") {
                try store.contains("/SQLDemo") && store.count(of: "Item", in: "/SQLDemo") == 1
            }
            #expect(await daemon.terminate() == 0)
            // The server notices the stream's end a moment after the daemon exits.
            try await eventually("the slot idle") {
                try await pg.sql("SELECT active FROM pg_replication_slots WHERE slot_name = $1", [settings.database!])
                    == [["f"]]
            }

            let ok = try await ChildProcess.run(
                ChildProcess.built("realm-adapter"), ["status", "--config", configFile])
            #expect(ok.status == 0, "\(ok.stderr)")
            // The daemon's own write (the row from Postgres) is nothing to send back: no lag.
            let row = ok.stdout.split(separator: "\n").first { $0.hasPrefix("/SQLDemo") }?.split(separator: " ").map(
                String.init)
            #expect(row?.prefix(3) == ["/SQLDemo", "1", "0"], "\(ok.stdout)")
            #expect(ok.stdout.contains("Slot \(settings.database!): confirmed"))
            #expect(ok.stdout.contains("idle (no daemon connected)"))

            // A tiny threshold: the same slot now counts as retaining too much.
            try DaemonProcess.edit(
                configFile, replacing: #""createSchema": true"#, with: #""createSchema": true, "walWarningBytes": 0"#)
            let warn = try await ChildProcess.run(
                ChildProcess.built("realm-adapter"), ["status", "--config", configFile])
            #expect(warn.status == 2)
            #expect(warn.stdout.contains("warning: the slot retains"))

            // A load that stopped before its end: `status` says so (not only `run`, which refuses).
            var environment = ProcessInfo.processInfo.environment
            environment[Failpoint.environmentVariable] = "load.before-hand-off=error"
            let load = try await ChildProcess.run(
                ChildProcess.built("realm-adapter"), ["load", "--config", configFile], environment: environment)
            #expect(load.status != 0, "\(load.stderr)")
            let unfinished = try await ChildProcess.run(
                ChildProcess.built("realm-adapter"), ["status", "--config", configFile])
            #expect(unfinished.status == 2)
            #expect(
                unfinished.stdout.contains("warning: A load into this store did not finish"), "\(unfinished.stdout)")
        }
    }

    /// The replication slot dropped while the daemon runs: it stops with an error that says
    /// what happened and what to do, instead of silently skipping changes.
    @Test(.timeLimit(.minutes(1)))
    func aSlotDroppedBehindItsBackStopsTheDaemonWithAClearErrorAndLoadRecovers() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, configFile) = try DaemonProcess.workspace(settings, schema: Self.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let daemon = try DaemonProcess(config: configFile, log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            let slot = settings.database!
            for _ in 0..<200 {
                let dropped = try await pg.session { s in
                    try s.query(
                        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active",
                        [slot])
                    try s.query(
                        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active",
                        [slot])
                    return try s.query("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", [slot]).rows
                        == [["0"]]
                }
                if dropped { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(await daemon.process.wait() == 1)
            let log = try String(contentsOfFile: dir + "/daemon.log", encoding: .utf8)
            #expect(log.contains("The replication slot \(slot) does not exist"))
            #expect(log.contains("realm-adapter load"))

            // The way back, as the message says: a row written while no slot existed comes in
            // with the load, and the daemon goes on from the load's snapshot.
            try await pg.session { s in _ = try s.query(#"INSERT INTO "Item" VALUES (2, 0, 'while no slot')"#) }
            let load = try await ChildProcess.run(
                ChildProcess.built("realm-adapter"), ["load", "--config", configFile])
            #expect(load.status == 0, "\(load.stderr)")
            let store = try RealmStore(directory: dir + "/store")
            #expect(try store.object(of: "Item", identity: 2, in: "/SQLDemo")?.values["origin"] == "while no slot")
            let again = try DaemonProcess(config: configFile, log: dir + "/daemon-again.log")
            try await again.waitUntilSyncing()
            try await pg.session { s in _ = try s.query(#"INSERT INTO "Item" VALUES (3, 0, 'after the load')"#) }
            try await eventually("item 3 in the Realm") {
                try store.object(of: "Item", identity: 3, in: "/SQLDemo") != nil
            }
            #expect(await again.terminate() == 0)
        }
    }

    /// Postgres restarted under the running daemon (its own throwaway cluster, so other tests
    /// are not disturbed): it reconnects and both sides end equal.
    @Test(.timeLimit(.minutes(2)))
    func survivesAPostgresRestart() async throws {
        try await OwnCluster.with("restart") { cluster in
            let settings = cluster.settings

            let dir = NSTemporaryDirectory() + "realm-adapter-restart-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let configFile = try SyncHarness.configFile(
                settings, store: dir + "/store", schema: Self.schema, directory: dir)
            let daemon = try DaemonProcess(config: configFile, log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            let store = try RealmStore(directory: dir + "/store")

            func insertInDatabase(_ ids: ClosedRange<Int>) async throws {
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                for i in ids {
                    try await pg.session { s in
                        _ = try s.query(#"INSERT INTO "Item" VALUES ($1, 0, 'db')"#, [String(i)])
                    }
                }
            }
            func insertInRealm(_ ids: ClosedRange<Int>) throws {
                for i in ids {
                    try store.write(to: "/SQLDemo", origin: "app") { tx in
                        if tx.schema[type: "Item"] == nil {
                            try tx.addType(
                                ObjectSchema(
                                    name: "Item", primaryKey: "id",
                                    properties: [
                                        Property(name: "id", type: .scalar(.int)),
                                        Property(name: "n", type: .scalar(.int)),
                                        Property(name: "origin", type: .scalar(.string)),
                                    ]))
                        }
                        try tx.create("Item", ["id": .int(Int64(i)), "n": 0, "origin": "realm"])
                    }
                }
            }
            try await insertInDatabase(1...20)
            try insertInRealm(1001...1020)
            try cluster.pgctl("restart")
            try insertInRealm(1021...1040)  // written while the daemon reconnects
            try await insertInDatabase(21...40)

            do {
                try await eventually("both sides to hold all 80 items", timeout: .seconds(60)) {
                    let pg = try await PostgresConnection.connect(settings)
                    defer { pg.close() }
                    let d = try await pg.session { s in try s.query(#"SELECT count(*) FROM "Item""#).rows }
                    let r = try store.count(of: "Item", in: "/SQLDemo")
                    return d == [["80"]] && r == 80
                }
            } catch {
                // The daemon's own account is the first thing to read.
                let log = (try? String(contentsOfFile: dir + "/daemon.log", encoding: .utf8)) ?? ""
                Issue.record(Comment(rawValue: "daemon log:\n" + String(log.suffix(3000))))
                throw error
            }
            #expect(daemon.process.isRunning)
            #expect(await daemon.terminate() == 0)
            let log = try String(contentsOfFile: dir + "/daemon.log", encoding: .utf8)
            #expect(log.contains("retrying"))
        }
    }
}

/// The interesting part of a daemon log: the crash report if there is one, else its end.
func crashReport(_ file: String) -> String {
    let log = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    guard let r = log.range(of: "crashed") else { return String(log.suffix(2000)) }
    return String(log[r.lowerBound...].prefix(3000))
}

extension PostgresIntegration.CrashTests {
    /// `realm-adapter init` turns tables, keys, foreign keys and a join table into a configuration
    /// that `validate` accepts, and says what it left out.
    @Test func initWritesAConfigurationFromTheDatabase() async throws {
        try await TestServer.withFreshDatabase { settings in
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            try await pg.session { s in
                try s.execute(
                    """
                    CREATE TYPE mood AS ENUM ('happy', 'sad');
                    CREATE TABLE employee (id int PRIMARY KEY, name text NOT NULL, tags text[], feeling mood, manager int REFERENCES employee (id));
                    CREATE TABLE route (key uuid PRIMARY KEY, name varchar(32));
                    CREATE TABLE employee_route (employee int REFERENCES employee (id), route uuid REFERENCES route (key), since date,
                                                 PRIMARY KEY (employee, route));
                    CREATE TABLE log (line text);
                    CREATE TABLE "Passport" ("PassportId" serial PRIMARY KEY, "RealmId" varchar(255) UNIQUE, "Country" text NOT NULL);
                    """)
            }
            let dir = NSTemporaryDirectory() + "realm-adapter-init-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let url = "postgresql://\(settings.user!)@\(settings.host!):\(settings.port!)/\(settings.database!)"
            let r = try await ChildProcess.run(
                ChildProcess.built("realm-adapter"), ["init", "--database", url, "-o", dir + "/adapter.json"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("note: employee.feeling: type mood is not mapped"))
            #expect(r.stderr.contains("note: log: left out, because it has no primary key"))
            let config = try Configuration.load(file: dir + "/adapter.json", environment: [:], connectors: .postgres)
            let employee = try #require(config.schema[type: "employee"])
            #expect(employee.primaryKey == "id")
            #expect(employee.properties.map(\.typeString) == ["int", "string", "string[]", "employee"])
            #expect(config.schema[type: "route"]?[property: "key"]?.type == .scalar(.uuid))
            let join = try #require(config.schema[type: "employee_route"])
            #expect(
                join.primaryKey == "id" && join[property: "employee"]?.type == .link("employee")
                    && join[property: "route"]?.type == .link("route"))
            #expect(config.mapping.compoundPrimaryKeys["employee_route"]?.map(\.dbColumn) == ["employee", "route"])
            #expect(config.database?.url == url)
            // A slot and a publication of this database's own: two databases on one server do not share them.
            let own = "realm_adapter_" + settings.database!
            #expect(config.database?.postgres.slotName == own && config.database?.postgres.publication == own)
            let passport = try #require(config.schema[type: "Passport"])
            #expect(passport.primaryKey == "RealmId" && passport.databasePrimaryKey == "PassportId")
            #expect(passport.properties.map(\.typeString) == ["int?", "string", "string"])
            let v = try await ChildProcess.run(
                ChildProcess.built("realm-adapter"), ["validate", "-c", dir + "/adapter.json"])
            #expect(v.status == 0, "\(v.stderr)")
        }
    }
}

extension PostgresIntegration.CrashTests {
    /// A change the database rejects stops the daemon with the change kept (retried on the next
    /// start); with ignoreSQLErrors it goes to the dead-letter table and sync goes on.
    @Test(.timeLimit(.minutes(1)))
    func rejectedChangesStopTheDaemonOrGoToTheDeadLetterTable() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, configFile) = try DaemonProcess.workspace(settings, schema: Self.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var daemon = try DaemonProcess(config: configFile, log: dir + "/daemon-1.log")
            try await daemon.waitUntilSyncing()
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            try await pg.session { s in try s.execute(#"ALTER TABLE "Item" ADD CONSTRAINT small CHECK (n < 100)"#) }
            let store = try RealmStore(directory: dir + "/store")
            func write(_ id: Int64, _ n: Int64) throws {
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    if tx.schema[type: "Item"] == nil {
                        try tx.addType(
                            GuaranteeWorkload.itemType)
                    }
                    try tx.create("Item", ["id": .int(id), "n": .int(n), "origin": "realm"])
                }
            }
            try write(1, 500)  // rejected by the CHECK constraint
            #expect(await daemon.process.wait() == 1)
            let log = try String(contentsOfFile: dir + "/daemon-1.log", encoding: .utf8)
            #expect(log.contains("violates check constraint"))
            // The server's DETAIL quotes the row ("Failing row contains (1, 500, realm)"): only at debug level.
            let detailed = log.split(separator: "\n").filter { $0.contains("Failing row contains") }
            #expect(!detailed.isEmpty && detailed.allSatisfy { $0.contains(" debug ") }, "\(detailed)")
            #expect(try await pg.session { s in try s.query(#"SELECT count(*) FROM "Item""#).rows } == [["0"]])

            // Fixed in the database: the kept change goes through on the next start.
            try await pg.session { s in try s.execute(#"ALTER TABLE "Item" DROP CONSTRAINT small"#) }
            daemon = try DaemonProcess(config: configFile, log: dir + "/daemon-2.log")
            try await daemon.waitUntilSyncing()
            try await eventually("item 1 in the database") {
                try await pg.session { s in try s.query(#"SELECT n FROM "Item" WHERE id = 1"#).rows } == [["500"]]
            }
            #expect(await daemon.terminate() == 0)

            // With ignoreSQLErrors the rejected change is kept aside and later ones still flow.
            try await pg.session { s in try s.execute(#"ALTER TABLE "Item" ADD CONSTRAINT small CHECK (n < 1000)"#) }
            try DaemonProcess.edit(configFile, replacing: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
            daemon = try DaemonProcess(config: configFile, log: dir + "/daemon-3.log")
            try await daemon.waitUntilSyncing()
            try write(2, 5000)
            try write(3, 3)
            try await eventually("item 3 in the database") {
                try await pg.session { s in try s.query(#"SELECT n FROM "Item" WHERE id = 3"#).rows } == [["3"]]
            }
            let dead = try await pg.session { s in
                try s.query("SELECT path, error, instructions::text FROM realm_adapter_dead_letter").rows
            }
            #expect(dead.count == 1)
            #expect(dead.first?[0] == "/SQLDemo")
            #expect(dead.first?[1]?.contains("violates check constraint") == true)
            #expect(dead.first?[1]?.contains("Failing row") == false)
            #expect(dead.first?[2]?.contains("\"identity\": 2") == true)
            #expect(await daemon.terminate() == 0)
        }
    }
}
