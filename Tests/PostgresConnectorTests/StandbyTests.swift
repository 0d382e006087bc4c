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
