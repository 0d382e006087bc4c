import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

/// Each crash window of each guarantee, hit on purpose by a failpoint (``Failpoint``) in the
/// real daemon, every run; `scripts/mutations.sh` checks that these tests fail when the guard
/// they prove is switched off.
extension PostgresIntegration {
    @Suite struct CrashWindowTests {
        /// A daemon that the failpoint `spec` will kill, fed one database transaction at a time by
        /// `step` until it dies; returns the last step taken.
        static func runUntilKilled(
            _ config: String, log: String, _ failpoint: Failpoint, _ spec: String,
            from first: Int, _ step: (Int) async throws -> Void
        ) async throws -> Int {
            let daemon = try DaemonProcess(config: config, log: log, failpoints: "\(failpoint.name)=\(spec)")
            try await daemon.waitUntilSyncing()
            var k = first
            while daemon.process.isRunning && k < first + 200 {
                try await step(k)
                k += 1
                try await Task.sleep(for: .milliseconds(30))
            }
            try await daemon.waitForFailpointKill(failpoint)
            return k - 1
        }

        /// Database → Realm, exactly once: killed after the Realm commit and before the flush
        /// confirm, the transaction is streamed again and skipped by its recorded position; killed
        /// before the Realm commit (with time for a confirm to reach the server, were it sent
        /// early), it is streamed again and applied. History shows each transaction once, in order.
        @Test(.timeLimit(.minutes(3)))
        func databaseToRealmCrashWindowsApplyEachTransactionOnce() async throws {
            try await TestServer.withFreshDatabase { settings in
                let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let store = try RealmStore(directory: dir + "/store")
                _ = try Adapter(store: store, name: "audit", pathRegex: ".*")  // keeps the whole history
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                let workload = GuaranteeWorkload(pg: pg)
                var started = false
                var k = try await Self.runUntilKilled(
                    config, log: dir + "/daemon-1.log", .dbToRealmAfterCommit, "5*off->kill",
                    from: 1
                ) { k in
                    if !started {
                        try await workload.start()
                        started = true
                    }
                    try await workload.commit(k)
                }
                k = try await Self.runUntilKilled(
                    config, log: dir + "/daemon-2.log", .dbToRealmBeforeCommit, "5*off->kill(300)",
                    from: k + 1
                ) { try await workload.commit($0) }
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-3.log")
                try await daemon.waitUntilSyncing()
                for i in k + 1...k + 5 { try await workload.commit(i) }
                try await workload.waitUntilTheRealmHoldsEveryRow(store)
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                #expect(try GuaranteeWorkload.problems(store) == [])
                #expect(try store.object(of: "Item", identity: 0, in: "/SQLDemo")?.values["n"] == .int(Int64(k + 5)))
            }
        }

        /// A large transaction reaches the Realm in parts (never held whole). Killed after the
        /// fourth part's Realm commit, the daemon streams the transaction again, skips the parts the
        /// Realm has and applies the rest: each row once, each part once, in order.
        @Test(.timeLimit(.minutes(2)))
        func aLargeTransactionKilledAfterAPartResumesAtTheNextPart() async throws {
            try await TestServer.withFreshDatabase { settings in
                let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                try DaemonProcess.edit(
                    config, replacing: #""createSchema": true"#,
                    with: #""createSchema": true, "largeTransactionChanges": 500"#)
                let store = try RealmStore(directory: dir + "/store")
                _ = try Adapter(store: store, name: "audit", pathRegex: ".*")
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                var daemon = try DaemonProcess(
                    config: config, log: dir + "/daemon-1.log",
                    failpoints: "db-to-realm.after-commit=3*off->kill")
                try await daemon.waitUntilSyncing()
                // 3,000 rows, each with a token inserted and deleted: 9,000 changes, 18 parts.
                _ = try await pg.sql(
                    """
                    DO $$ BEGIN FOR g IN 1..3000 LOOP
                      INSERT INTO "Item" VALUES (g, 0, 'db'); INSERT INTO "Item" VALUES (-g, 0, 'token');
                      DELETE FROM "Item" WHERE id = -g;
                    END LOOP; END $$
                    """)
                try await daemon.waitForFailpointKill(.dbToRealmAfterCommit)
                let atKill = try store.count(of: "Item", in: "/SQLDemo")
                #expect(atKill > 0 && atKill < 3000, "\(atKill) rows at the kill")

                daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await eventually("every row in the Realm", timeout: .seconds(60)) {
                    try store.count(of: "Item", in: "/SQLDemo") == 3000
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                #expect(try GuaranteeWorkload.problems(store) == [])
                let parts = try store.history(of: "/SQLDemo").filter { $0.origin == "adapter:pg" }
                #expect(parts.count == 18, "\(parts.count) Realm transactions")
            }
        }

        /// Realm → database, exactly once: killed after the database committed Realm transactions
        /// with their marker and before the cursor advanced, the daemon resumes from the marker and
        /// sends nothing twice; killed before the database transaction, it sends it on restart. A
        /// rejected transaction dead-lettered and then killed is not dead-lettered again. Rows the
        /// database wrote are never written back to it (no echo), and a database change to an
        /// object the Realm wrote reaches the Realm (its own write, read back, counted as held).
        @Test(.timeLimit(.minutes(3)))
        func realmToDatabaseCrashWindowsWriteEachTransactionOnce() async throws {
            try await TestServer.withFreshDatabase { settings in
                let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let store = try RealmStore(directory: dir + "/store")
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                var audited = false
                // Realm transaction k: item 100000 + k; waits until the database has it (or the daemon died).
                func write(_ k: Int, n: Int64 = 0) async throws {
                    if !audited {
                        try await WriteAudit.install(pg)
                        audited = true
                    }
                    try store.write(to: "/SQLDemo", origin: "app") { tx in
                        try tx.adopt(try Schema(json: JSONValue(parsing: GuaranteeWorkload.schema)))
                        try tx.create("Item", ["id": .int(Int64(100_000 + k)), "n": .int(n), "origin": "realm"])
                    }
                    for _ in 0..<100 {
                        if try await pg.sql(#"SELECT 1 FROM "Item" WHERE id = $1"#, [String(100_000 + k)]) != [] {
                            return
                        }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
                var k = try await Self.runUntilKilled(
                    config, log: dir + "/daemon-1.log", .realmToDbAfterCommit, "5*off->kill",
                    from: 1
                ) { try await write($0) }
                k = try await Self.runUntilKilled(
                    config, log: dir + "/daemon-2.log", .realmToDbBeforeCommit, "5*off->kill",
                    from: k + 1
                ) { try await write($0) }

                // A rejected change, dead-lettered, then killed before the cursor moves.
                _ = try await pg.sql(#"ALTER TABLE "Item" ADD CONSTRAINT small CHECK (n < 1000)"#)
                try DaemonProcess.edit(config, replacing: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
                let rejected = k + 1
                k = try await Self.runUntilKilled(
                    config, log: dir + "/daemon-3.log", .realmToDbAfterDeadLetter, "kill",
                    from: rejected
                ) { try await write($0, n: $0 == rejected ? 5000 : 0) }

                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-4.log")
                try await daemon.waitUntilSyncing()
                _ = try await pg.sql(#"INSERT INTO "Item" SELECT g, 0, 'db' FROM generate_series(1, 5) g"#)
                try await write(k + 1)
                try await eventually("the Realm and the database to hold the same items", timeout: .seconds(60)) {
                    let d = try await pg.sql(#"SELECT id::text, n::text, origin FROM "Item" ORDER BY "Item".id"#)
                    return try d == GuaranteeWorkload.realmItems(store).filter { $0[0] != String(100_000 + rejected) }
                }
                // Each Realm item written to the database once (the rejected one never), each
                // database row once (never written back), one dead letter.
                let ids = 100_001...(100_000 + k + 1)
                #expect(try await WriteAudit.notWrittenOnce(pg, ids) == ["\(100_000 + rejected): 0"])
                #expect(try await WriteAudit.notWrittenOnce(pg, 1...5) == [])
                #expect(try await pg.sql("SELECT count(*) FROM realm_adapter_dead_letter") == [["1"]])

                // A database change to an object the Realm wrote reaches the Realm.
                _ = try await pg.sql(#"UPDATE "Item" SET n = 7 WHERE id = $1"#, [String(100_001)])
                try await eventually("the database's update in the Realm") {
                    try store.object(of: "Item", identity: .int(100_001), in: "/SQLDemo")?.values["n"] == .int(7)
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            }
        }
    }
}

extension PostgresIntegration.CrashWindowTests {
    /// The load's snapshot and the daemon's stream meet exactly: while the load holds its
    /// snapshot's position (the slot just created) and has read nothing, the database goes on
    /// committing; the snapshot must not see those transactions (the stream brings them), so
    /// the counter in the Realm's history only goes up and no transaction is applied twice.
    @Test(.timeLimit(.minutes(2)))
    func theLoadSnapshotMeetsTheStreamExactly() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            _ = try await pg.sql(
                #"CREATE TABLE "Item" (id bigint PRIMARY KEY, n bigint NOT NULL, origin text NOT NULL)"#)
            let workload = GuaranteeWorkload(pg: pg)
            try await workload.start()
            for k in 1...20 { try await workload.commit(k) }
            let cli = ChildProcess.built("realm-adapter")
            let load = try ChildProcess(
                cli, ["load", "--config", config, "--log-level", "info"],
                environment: DaemonProcess.environment(failpoints: "load.after-snapshot-point=sleep(1500)"),
                stdout: dir + "/load.log", stderr: dir + "/load.log")
            try await eventually("the load to hold its snapshot point") {
                (try? String(contentsOfFile: dir + "/load.log", encoding: .utf8))?.contains(
                    "failpoint load.after-snapshot-point") == true
            }
            var k = 21
            while load.isRunning {  // transactions after the snapshot's position, while the load waits and reads
                try await workload.commit(k)
                k += 1
            }
            #expect(
                await load.wait() == 0, "\((try? String(contentsOfFile: dir + "/load.log", encoding: .utf8)) ?? "")")
            #expect(k > 25, "only \(k - 21) transactions during the load")

            let store = try RealmStore(directory: dir + "/store")
            _ = try Adapter(store: store, name: "audit", pathRegex: ".*")  // keeps the history from here on
            let daemon = try DaemonProcess(config: config, log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            try await workload.commit(k)
            try await workload.waitUntilTheRealmHoldsEveryRow(store)
            #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            #expect(try GuaranteeWorkload.problems(store) == [])
        }
    }

    /// The hand-off also settles which Realm writes the database holds: a daemon killed after
    /// writing a Realm change to the database but before reading its own write back (failpoint
    /// `db-to-realm.received`), then a load. The load's snapshot holds that write, so a later
    /// database change to the same object must reach the Realm (not be held back as if the
    /// Realm's write were still on its way to the database).
    @Test(.timeLimit(.minutes(2)))
    func aLoadSettlesTheRealmWritesTheDatabaseAlreadyHolds() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            let store = try RealmStore(directory: dir + "/store")
            let daemon = try DaemonProcess(
                config: config, log: dir + "/daemon-1.log", failpoints: "db-to-realm.received=sleep(60000)")
            try await daemon.waitUntilSyncing()
            try store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.adopt(try Schema(json: JSONValue(parsing: GuaranteeWorkload.schema)))
                try tx.create("Item", ["id": 1, "n": 0, "origin": "realm"])
            }
            let c = try Configuration.load(file: config, environment: [:], connectors: .postgres)
            let adapter = try Adapter(store: store, name: c.realm.adapterName, pathRegex: c.realm.effectivePathRegex)
            try await eventually("the Realm write in the database, and the adapter past it") {
                try await pg.sql(#"SELECT n FROM "Item" WHERE id = 1"#) == [["0"]]
                    && adapter.pendingCount("/SQLDemo") == 0
            }
            try await eventually("the daemon to hold its own write, unread") {
                (try? String(contentsOfFile: daemon.log, encoding: .utf8))?.contains("failpoint db-to-realm.received")
                    == true
            }
            daemon.kill9()

            let load = try await ChildProcess.run(ChildProcess.built("realm-adapter"), ["load", "--config", config])
            #expect(load.status == 0, "\(load.stderr)")
            let again = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
            try await again.waitUntilSyncing()
            _ = try await pg.sql(#"UPDATE "Item" SET n = 7 WHERE id = 1"#)
            try await eventually("the database's change in the Realm") {
                try store.object(of: "Item", identity: 1, in: "/SQLDemo")?.values["n"] == 7
            }
            #expect(await again.terminate() == 0, Comment(rawValue: crashReport(again.log)))
        }
    }
}

extension PostgresIntegration.CrashWindowTests {
    /// Key write-back: rows created in the database without a RealmId get one, written back to
    /// the database before the Realm commits. Killed in between (failpoint
    /// `db-to-realm.before-commit`), the daemon streams the rows again and must give the Realm
    /// the RealmIds the database already has.
    @Test(.timeLimit(.minutes(2)))
    func realmIdsWrittenBackBeforeAKillAreTheOnesTheRealmGets() async throws {
        typealias Keys = PostgresIntegration.DatabaseKeyTests
        try await TestServer.withFreshDatabase { settings in
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            _ = try await pg.sql(Keys.ddl)
            let (dir, config) = try DaemonProcess.workspace(settings, schema: Keys.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var daemon = try DaemonProcess(
                config: config, log: dir + "/daemon-1.log",
                failpoints: "\(Failpoint.dbToRealmBeforeCommit.name)=kill")
            try await daemon.waitUntilSyncing()
            _ = try await pg.sql(
                """
                BEGIN;
                INSERT INTO "Passport" ("Country") VALUES ('NO'), ('SE');
                INSERT INTO "Person" ("Name", "PassportId") VALUES ('Ann', 1), ('Bo', 2);
                INSERT INTO "Person_visas" VALUES (1, 0, 2);
                COMMIT;
                """)
            try await daemon.waitForFailpointKill(.dbToRealmBeforeCommit)
            let written = try await pg.sql(#"SELECT count(*) FROM "Person" WHERE "RealmId" IS NOT NULL"#)
            #expect(written == [["2"]], "the RealmIds were written back before the kill")

            daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
            try await daemon.waitUntilSyncing()
            let store = try RealmStore(directory: dir + "/store")
            var people: [[String?]] = []
            try await eventually("the Realm to hold the database's people") {
                people = try await Keys.databasePeople { try await pg.sql($0) }
                return try store.contains("/SQLDemo") && Keys.realmPeople(store) == people
            }
            #expect(people.count == 2 && people.allSatisfy { $0[0] != nil && $0[3] != nil })
            #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
        }
    }
}

extension PostgresIntegration.CrashWindowTests {
    /// Two daemons started at the same instant: one syncs, the other stops at once saying a
    /// daemon already runs (not a raw "replication origin … is already active"), every time.
    @Test(.timeLimit(.minutes(2)))
    func aSecondDaemonStopsAtOnceWithAClearReason() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            for round in 1...4 {
                let a = try DaemonProcess(config: config, log: dir + "/a-\(round).log")
                let b = try DaemonProcess(config: config, log: dir + "/b-\(round).log")
                try await eventually("one of the two to exit") { !a.process.isRunning || !b.process.isRunning }
                let (stopped, running) = a.process.isRunning ? (b, a) : (a, b)
                #expect(await stopped.process.wait() == 1)
                let log = try String(contentsOfFile: stopped.log, encoding: .utf8)
                #expect(
                    log.contains("Another realm-adapter daemon is running") && !log.contains("already active"),
                    "\(log.suffix(1500))")
                try await running.waitUntilSyncing()
                #expect(await running.terminate() == 0, Comment(rawValue: crashReport(running.log)))
            }
        }
    }

    /// A store deleted (under a running daemon, or after it stopped): the next start refuses
    /// (the slot goes on from where it was, so a new store would get only the newest rows) and
    /// says to load.
    @Test(.timeLimit(.minutes(1)))
    func aStoreThatNeverFollowedAnExistingSlotIsRefused() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var daemon = try DaemonProcess(config: config, log: dir + "/daemon-1.log")
            try await daemon.waitUntilSyncing()
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            _ = try await pg.sql(#"INSERT INTO "Item" VALUES (1, 0, 'db')"#)
            #expect(await daemon.terminate() == 0)
            try FileManager.default.removeItem(atPath: dir + "/store")
            daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
            #expect(await daemon.process.wait() == 1)
            let log = try String(contentsOfFile: daemon.log, encoding: .utf8)
            #expect(
                log.contains("never loaded from it or followed it") && log.contains("realm-adapter load"),
                "\(log.suffix(1500))")
            // The way back, as it says.
            let load = try await ChildProcess.run(ChildProcess.built("realm-adapter"), ["load", "--config", config])
            #expect(load.status == 0, "\(load.stderr)")
            daemon = try DaemonProcess(config: config, log: dir + "/daemon-3.log")
            try await daemon.waitUntilSyncing()
            #expect(await daemon.terminate() == 0)
            #expect(try RealmStore(directory: dir + "/store").object(of: "Item", identity: 1, in: "/SQLDemo") != nil)
        }
    }
}

extension PostgresIntegration.CrashWindowTests {
    /// A first start that fails after creating the slot (here: before its stream starts) drops
    /// that slot again, so nothing retains WAL for a daemon that never ran; the next start
    /// creates it anew and syncs.
    @Test(.timeLimit(.minutes(1)))
    func aFailedFirstStartLeavesNoSlotBehind() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            let slot = try Configuration.load(file: config, environment: [:], connectors: .postgres).database!.postgres
                .slotName
            let slotCount = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '\(slot)'"
            var daemon = try DaemonProcess(
                config: config, log: dir + "/daemon-1.log", failpoints: "db-to-realm.before-stream=error")
            #expect(await daemon.process.wait() != 0)
            let log = try String(contentsOfFile: daemon.log, encoding: .utf8)
            #expect(
                log.contains("Created the replication slot")
                    && log.contains("Dropped the replication slot this start created"),
                "\(log.suffix(1500))")
            #expect(try await pg.sql(slotCount) == [["0"]], "no slot left retaining WAL")
            daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
            try await daemon.waitUntilSyncing()
            _ = try await pg.sql(#"INSERT INTO "Item" VALUES (1, 0, 'db')"#)
            let store = try RealmStore(directory: dir + "/store")
            try await eventually("the row in the Realm") {
                (try? store.object(of: "Item", identity: 1, in: "/SQLDemo")) != nil
            }
            #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            #expect(try await pg.sql(slotCount) == [["1"]], "a daemon that ran keeps its slot")
        }
    }

    /// A slot dropped behind the adapter's back while the daemon was stopped: the next start
    /// would create a new one from now, and the changes made meanwhile would never reach the
    /// Realms. It is refused (saying to load), and the slot it created is dropped again.
    @Test(.timeLimit(.minutes(1)))
    func aStoreWhoseSlotWasDroppedIsRefused() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            let slot = try Configuration.load(file: config, environment: [:], connectors: .postgres).database!.postgres
                .slotName
            var daemon = try DaemonProcess(config: config, log: dir + "/daemon-1.log")
            try await daemon.waitUntilSyncing()
            _ = try await pg.sql(#"INSERT INTO "Item" VALUES (1, 0, 'db')"#)
            let store = try RealmStore(directory: dir + "/store")
            try await eventually("row 1 in the Realm") {
                (try? store.object(of: "Item", identity: 1, in: "/SQLDemo")) != nil
            }
            #expect(await daemon.terminate() == 0)
            // The server's walsender may outlive the daemon by a moment: the slot is active until it ends.
            try await eventually("the slot released") {
                try await pg.sql("SELECT active FROM pg_replication_slots WHERE slot_name = '\(slot)'") == [["f"]]
            }
            _ = try await pg.sql("SELECT pg_drop_replication_slot('\(slot)')")
            _ = try await pg.sql(#"INSERT INTO "Item" VALUES (2, 0, 'missed')"#)
            daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
            #expect(await daemon.process.wait() == 1)
            let log = try String(contentsOfFile: daemon.log, encoding: .utf8)
            #expect(
                log.contains("that this store followed is gone") && log.contains("realm-adapter load"),
                "\(log.suffix(1500))")
            #expect(
                try await pg.sql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '\(slot)'") == [["0"]])
            let load = try await ChildProcess.run(ChildProcess.built("realm-adapter"), ["load", "--config", config])
            #expect(load.status == 0, "\(load.stderr)")
            #expect(try store.object(of: "Item", identity: 2, in: "/SQLDemo") != nil, "the load brings the missed row")
        }
    }
}
