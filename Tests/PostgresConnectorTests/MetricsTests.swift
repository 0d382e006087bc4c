import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// `/metrics` and `/health/*` of the real daemon, read by clients nobody here wrote: Prometheus's
    /// own parser (prometheus-client) and curl. The daemon reaches Postgres through a TCP proxy,
    /// so that stopping the proxy is, to it, the database going away.
    @Suite struct MetricsTests {
        static let schema =
            #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "origin": "string"}}]"#
        static let support = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Support/metrics").standardized.path

        /// Starts the proxy to Postgres on `port` (0: any); returns it and the port it listens on.
        func proxy(_ settings: PostgresSettings, port: Int, _ dir: String) async throws -> (ChildProcess, Int) {
            let out = dir + "/proxy-\(UUID().uuidString.prefix(4)).port"
            let p = try ChildProcess(
                "/usr/bin/env",
                ["python3", Self.support + "/tcp-proxy.py", "\(port)", settings.host!, "\(settings.port!)"],
                stdout: out)
            for _ in 0..<500 {
                if let port = Int(
                    ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").trimmingCharacters(
                        in: .whitespacesAndNewlines))
                {
                    return (p, port)
                }
                try await Task.sleep(for: .microseconds(10_000))
            }
            throw ChildProcessError("the TCP proxy did not start")
        }

        func freePort() async throws -> Int {
            let r = try await ChildProcess.run(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])",
                ])
            return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))!
        }

        /// The samples of `/metrics`, as the parser reads them: `name{labels}` → value.
        func scrape(_ port: Int) async throws -> [String: Double] {
            let r = try await ChildProcess.run(
                "/usr/bin/env", ["python3", Self.support + "/scrape.py", "http://127.0.0.1:\(port)/metrics"])
            guard r.status == 0 else { throw ChildProcessError("scrape.py: \(r.stderr)") }
            var samples: [String: Double] = [:]
            for line in r.stdout.split(separator: "\n") {
                guard let space = line.lastIndex(of: " ") else { continue }
                samples[String(line[..<space])] = Double(line[line.index(after: space)...])
            }
            return samples
        }

        func get(_ port: Int, _ path: String) async throws -> (Int, String) { try await httpGet(port, path) }

        @Test(.timeLimit(.minutes(2)))
        func countersMoveByTheChangesOfEachSideAndReadinessFollowsTheDatabase() async throws {
            try await TestServer.withFreshDatabase { settings in
                let (dir, configFile) = try DaemonProcess.workspace(settings, schema: Self.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                var (proxy, proxyPort) = try await self.proxy(settings, port: 0, dir)
                defer {
                    proxy.signal(SIGKILL)
                    proxy.reap()
                }
                let metricsPort = try await freePort()
                try DaemonProcess.edit(
                    configFile, replacing: #""port": \#(settings.port!)"#, with: #""port": \#(proxyPort)"#)
                try DaemonProcess.edit(
                    configFile, replacing: #""schema": "#,
                    with: #""server": {"metricsPort": \#(metricsPort)}, "schema": "#)
                let daemon = try DaemonProcess(config: configFile, log: dir + "/daemon.log")
                try await daemon.waitUntilSyncing()
                try await eventually("ready") { try await get(metricsPort, "/health/ready").0 == 200 }
                #expect(try await get(metricsPort, "/health/live") == (200, #"{"status":"live"}"#))

                // Database side: four transactions, five rows (straight to Postgres, not through the proxy).
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                for id in 1...3 {
                    try await pg.session { s in _ = try s.query(#"INSERT INTO "Item" VALUES (\#(id), 0, 'db')"#) }
                }
                try await pg.session { s in _ = try s.query(#"INSERT INTO "Item" VALUES (4, 0, 'db'), (5, 0, 'db')"#) }
                // Realm side: three transactions, four objects.
                let store = try RealmStore(directory: dir + "/store")
                func item(_ id: Int64) -> Instruction {
                    .insert(objectType: "Item", identity: .int(id), values: ["n": .int(0), "origin": "realm"])
                }
                try await eventually("the database's rows in the Realm") {
                    (try? store.count(of: "Item", in: "/SQLDemo")) == 5
                }
                try await store.apply([item(11)], to: "/SQLDemo", origin: "app")
                try await store.apply([item(12)], to: "/SQLDemo", origin: "app")
                try await store.apply([item(13), item(14)], to: "/SQLDemo", origin: "app")
                let counters = [
                    #"realm_adapter_transactions_total{direction="database_to_realm"}"#: 4.0,
                    #"realm_adapter_row_changes_total{direction="database_to_realm"}"#: 5,
                    #"realm_adapter_transactions_total{direction="realm_to_database"}"#: 3,
                    #"realm_adapter_row_changes_total{direction="realm_to_database"}"#: 4,
                ]
                var samples: [String: Double] = [:]
                try await eventually("the counters") {
                    samples = try await scrape(metricsPort)
                    return counters.allSatisfy { samples[$0.key] == $0.value }
                        && samples["realm_adapter_unsent_realm_transactions{}"] == 0
                }
                for (name, value) in counters { #expect(samples[name] == value, "\(name): \(samples)") }
                #expect(samples["realm_adapter_slot_retained_wal_bytes{}"].map { $0 > 0 } == true, "\(samples)")
                #expect(samples["realm_adapter_seconds_behind_source{}"] != nil)

                // The database goes away: not ready, saying why; back: ready again, one reconnect more.
                proxy.signal(SIGKILL)
                await proxy.wait()
                try await eventually("not ready") { try await get(metricsPort, "/health/ready").0 == 503 }
                let (_, reason) = try await get(metricsPort, "/health/ready")
                #expect(reason.contains("the change stream stopped (the log says why)"), "\(reason)")
                (proxy, _) = try await self.proxy(settings, port: proxyPort, dir)
                try await eventually("ready again", timeout: .seconds(30)) {
                    try await get(metricsPort, "/health/ready").0 == 200
                }
                let after = try await scrape(metricsPort)
                #expect(
                    (after[#"realm_adapter_reconnects_total{direction="database_to_realm"}"#] ?? 0) >= 1, "\(after)")
                #expect(await daemon.terminate() == 0)
            }
        }
    }
}
