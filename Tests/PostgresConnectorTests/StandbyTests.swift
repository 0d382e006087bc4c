import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// Two daemons on one Postgres store: one syncs, the other stands by (its log and
    /// `/health/ready` say so) and takes over when the first is killed, exactly once both ways.
    @Suite struct StandbyTests {
        @Test(.timeLimit(.minutes(3)))
        func aStandbyTakesOverAKilledDaemonAndLosesNothing() async throws {
            try await TestServer.withFreshDatabase { settings in
                let dir = try DaemonProcess.directory()
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let testStore = try await TestStore(.postgres, in: dir)
                let store = testStore.store
                let configFile = try SyncHarness.configFile(
                    settings, store: testStore.location, schema: CrashTests.schema, directory: dir)
                _ = try Adapter(store: store, name: "audit", pathRegex: ".*")
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }

                let active = try DaemonProcess(config: configFile, log: dir + "/active.log")
                try await active.waitUntilSyncing()
                let port = freePort()
                let standby = try DaemonProcess(
                    config: configFile, log: dir + "/standby.log", arguments: ["--metrics-port", "\(port)"])
                try await eventually("the second daemon to stand by") { standby.logContains("Standing by") }
                try await eventually("/health/ready to say it stands by") {
                    let (status, body) = try await httpGet(port, "/health/ready")
                    return status == 503 && body.contains("standing by")
                }
                try await pg.session { s in try s.execute(CrashTests.countWrites) }

                let perSide = 400
                let (dbWritten, realmWritten) = (Counter(), Counter())
                let dbWriter = Task {
                    let conn = try await PostgresConnection.connect(settings)
                    defer { conn.close() }
                    for i in 1...perSide {
                        try await conn.session { s in
                            _ = try s.query(#"INSERT INTO "Item" (id, n, origin) VALUES ($1, 0, 'db')"#, [String(i)])
                        }
                        dbWritten.set(i)
                        if i % 10 == 0 { try await Task.sleep(for: .milliseconds(10)) }
                    }
                }
                let realmWriter = CrashTests.realmWriter(store, items: perSide, written: realmWritten)
                try await Task.sleep(for: .milliseconds(300))
                active.kill9()
                let killedAt = ContinuousClock.now
                let writersAtKill = (dbWritten.value, realmWritten.value)
                try await eventually("the standby to take over", timeout: .seconds(10)) {
                    standby.logContains("Taking over") && standby.logContains("Syncing")
                }
                let takeover = ContinuousClock.now - killedAt
                try await dbWriter.value
                try await realmWriter.value

                try await eventually("both sides to hold every item", timeout: .seconds(60)) {
                    let d = try await pg.session { s in
                        try s.query(#"SELECT id, n, origin FROM "Item" ORDER BY id"#).rows
                    }
                    let r = try store.objects(of: "Item", in: "/SQLDemo").map { o in
                        [o.identity.description, o.values["n"]!.description, o.values["origin"]!.description]
                    }
                    return d.count == 2 * perSide && r == d
                }
                #expect(await standby.terminate() == 0, Comment(rawValue: crashReport(standby.log)))
                #expect(writersAtKill.0 < perSide && writersAtKill.1 < perSide, "writers at the kill: \(writersAtKill)")
                #expect(takeover < .seconds(10), "took over after \(takeover)")
                let twice = try await pg.session { s in
                    try s.query("SELECT count(*) FROM writes WHERE id > 100000 AND count <> 1").rows
                }
                #expect(twice == [["0"]])
                #expect(try GuaranteeWorkload.problems(store) == [])
                await testStore.remove()
            }
        }

        /// The window between the store's commit and what follows it, with a standby: the active
        /// daemon is killed by a failpoint right after the store committed a database transaction
        /// (its position not yet confirmed to the database), or right after the database committed
        /// Realm transactions (the cursor in the store not yet advanced). The standby takes over and
        /// applies each transaction exactly once, each way.
        @Test(.timeLimit(.minutes(3)), arguments: [Failpoint.dbToRealmAfterCommit, .realmToDbAfterCommit])
        func aStandbyTakesOverInTheWindowAfterACommit(_ failpoint: Failpoint) async throws {
            try await TestServer.withFreshDatabase { settings in
                let dir = try DaemonProcess.directory()
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let testStore = try await TestStore(.postgres, in: dir)
                let store = testStore.store
                let configFile = try SyncHarness.configFile(
                    settings, store: testStore.location, schema: GuaranteeWorkload.schema, directory: dir)
                _ = try Adapter(store: store, name: "audit", pathRegex: ".*")  // keeps the whole history
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                let workload = GuaranteeWorkload(pg: pg)

                let active = try DaemonProcess(
                    config: configFile, log: dir + "/active.log", failpoints: "\(failpoint.name)=5*off->kill")
                try await active.waitUntilSyncing()
                let standby = try DaemonProcess(config: configFile, log: dir + "/standby.log")
                try await eventually("the second daemon to stand by") { standby.logContains("Standing by") }
                try await workload.start()
                try await WriteAudit.install(pg)
                // Transaction k: from the database (the stream's window) or from the Realm (the cursor's).
                func step(_ k: Int) async throws {
                    guard failpoint == .realmToDbAfterCommit else { return try await workload.commit(k) }
                    try store.write(to: "/SQLDemo", origin: "app") { tx in
                        try tx.adopt(try Schema(json: JSONValue(parsing: GuaranteeWorkload.schema)))
                        try tx.create("Item", ["id": .int(Int64(100_000 + k)), "n": 0, "origin": "realm"])
                    }
                }
                var k = 1
                while active.process.isRunning && k < 200 {
                    try await step(k)
                    k += 1
                    try await Task.sleep(for: .milliseconds(30))
                }
                try await active.waitForFailpointKill(failpoint)
                try await eventually("the standby to take over", timeout: .seconds(10)) {
                    standby.logContains("Taking over") && standby.logContains("Syncing")
                }
                for i in k...k + 4 { try await step(i) }
                try await eventually("the Realm and the database to hold the same items", timeout: .seconds(60)) {
                    try await workload.databaseItems() == GuaranteeWorkload.realmItems(store)
                }
                #expect(await standby.terminate() == 0, Comment(rawValue: crashReport(standby.log)))
                #expect(try GuaranteeWorkload.problems(store) == [])
                if failpoint == .realmToDbAfterCommit {
                    #expect(try await WriteAudit.notWrittenOnce(pg, 100_001...(100_000 + k + 4)) == [])
                }
                await testStore.remove()
            }
        }

        /// The store's database refuses connections for a while and ends the daemon's connections
        /// to it (not its lock's): the daemon retries with its backoff and goes on once the
        /// database is back, both ways, nothing lost. Then the session holding its lock ends (as a
        /// restart of that server does): the daemon writes nothing more and stops, saying why.
        @Test(.timeLimit(.minutes(3)))
        func aDaemonWaitsOutItsStoreAndStopsWhenItsLockIsGone() async throws {
            try await TestServer.withFreshDatabase { settings in
                let dir = try DaemonProcess.directory()
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let testStore = try await TestStore(.postgres, in: dir)
                let store = testStore.store
                let storeDatabase = String(testStore.location.split(separator: "/").last!)
                let configFile = try SyncHarness.configFile(
                    settings, store: testStore.location, schema: CrashTests.schema, directory: dir)
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                let admin = try await PostgresConnection.connect(TestServer.settings)
                defer { admin.close() }
                let daemon = try DaemonProcess(config: configFile, log: dir + "/daemon.log")
                try await daemon.waitUntilSyncing()
                func insert(_ id: Int) async throws {
                    try await pg.session { s in
                        _ = try s.query(#"INSERT INTO "Item" (id, n, origin) VALUES ($1, 0, 'db')"#, [String(id)])
                    }
                }
                func realmHas(_ count: Int) throws -> Bool {
                    try store.contains("/SQLDemo") && store.count(of: "Item", in: "/SQLDemo") == count
                }
                try await insert(1)
                try await eventually("the first row in the Realm") { try realmHas(1) }

                // Closed, and every connection to it ended but the lock's.
                try await admin.session { s in
                    try s.execute("ALTER DATABASE \(storeDatabase) ALLOW_CONNECTIONS false")
                    _ = try s.query(
                        """
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1
                        AND pid NOT IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)
                        """, [storeDatabase])
                }
                try await insert(2)
                try await eventually("the daemon to retry", timeout: .seconds(20)) {
                    daemon.logContains("Connection problem; retrying")
                }
                #expect(daemon.process.isRunning, Comment(rawValue: crashReport(daemon.log)))
                try await admin.session { s in try s.execute("ALTER DATABASE \(storeDatabase) ALLOW_CONNECTIONS true") }
                try await CrashTests.realmWriter(store, items: 1, written: Counter()).value
                try await eventually("both sides to hold every item", timeout: .seconds(60)) {
                    let d = try await pg.session { s in try s.query(#"SELECT count(*) FROM "Item""#).rows[0][0] }
                    return try realmHas(3) && d == "3"
                }

                // The lock's session ended: the next write is fenced, and the daemon stops.
                _ = try await TestServer.endLockSessions(in: storeDatabase)
                try await insert(4)
                try await eventually("the daemon to stop", timeout: .seconds(30)) { !daemon.process.isRunning }
                #expect(
                    daemon.logContains("no longer holds its lock on the store"),
                    Comment(rawValue: crashReport(daemon.log)))
                #expect(try realmHas(3))
                await testStore.remove()
            }
        }
    }
}

/// The HTTP status and body curl gets from `path` on a local port.
func httpGet(_ port: Int, _ path: String) async throws -> (Int, String) {
    let r = try await ChildProcess.run(
        "/usr/bin/curl", ["-s", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)"])
    let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let body = lines.dropLast().joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    return (Int(lines.last ?? "") ?? 0, body)
}

extension DaemonProcess {
    func logContains(_ text: String) -> Bool {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(text)
    }
}
