import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// The password never shows: not in any command's output, not in its logs at any level, in
    /// each form a connection string takes.
    @Suite struct SecretsTests {
        static let password = "Pw-7f3a9-never-printed"

        @Test(.timeLimit(.minutes(2)), arguments: ["keywords", "url"])
        func noCommandPrintsOrLogsThePassword(form: String) async throws {
            try await TestServer.withFreshDatabase { settings in
                let dir = NSTemporaryDirectory() + "realm-adapter-secrets-\(UUID().uuidString.prefix(8))"
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let (h, p, u, d) = (settings.host!, settings.port!, settings.user!, settings.database!)
                // The test server trusts local connections: any password connects.
                let url =
                    form == "url"
                    ? "postgresql://\(u):\(Self.password)@\(h):\(p)/\(d)"
                    : "host=\(h) port=\(p) user=\(u) dbname=\(d) password='\(Self.password)'"
                let config = dir + "/adapter.json"
                try """
                {"realm": {"store": "\(dir)/store", "path": "/SQLDemo", "adapterName": "pg"},
                 "database": {"type": "postgres", "url": "\(url.replacingOccurrences(of: "'", with: "\\u0027"))",
                              "createSchema": true, "slotName": "\(d)"},
                 "schema": \(GuaranteeWorkload.schema)}
                """.write(toFile: config, atomically: true, encoding: .utf8)
                let cli = ChildProcess.built("realm-adapter")
                var outputs: [String: String] = [:]
                func run(_ name: String, _ arguments: [String]) async throws {
                    let log = "\(dir)/\(name).log"
                    let r = try await ChildProcess.run(cli, arguments + ["--log-level", "trace", "--log-file", log])
                    outputs[name] = r.stdout + r.stderr + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
                    #expect(r.status == 0 || name == "init-bad", "\(name): \(r.stderr)")
                }
                try await run("validate", ["validate", "--config", config])
                try await run("load", ["load", "--config", config])
                let daemon = try ChildProcess(
                    cli, ["run", "--config", config, "--log-level", "trace", "--log-file", dir + "/run.log"],
                    stdout: dir + "/run.out", stderr: dir + "/run.out")
                try await eventually("the daemon syncing") {
                    (try? String(contentsOfFile: dir + "/run.log", encoding: .utf8))?.contains("Syncing") == true
                }
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                _ = try await pg.sql(#"INSERT INTO "Item" VALUES (1, 1, 'db')"#)
                try await Task.sleep(for: .milliseconds(300))
                daemon.signal(SIGTERM)
                #expect(await daemon.wait() == 0)
                outputs["run"] =
                    try String(contentsOfFile: dir + "/run.log", encoding: .utf8)
                    + String(contentsOfFile: dir + "/run.out", encoding: .utf8)
                try await run("status", ["status", "--config", config])
                try await run("init", ["init", "--database", url, "-o", dir + "/init.json"])
                outputs["init.json"] = try String(contentsOfFile: dir + "/init.json", encoding: .utf8)
                // A connection that fails: the error names the server, not the password.
                try await run("init-bad", ["init", "--database", url.replacingOccurrences(of: "\(p)", with: "1")])
                for (name, text) in outputs.sorted(by: { $0.key < $1.key }) {
                    #expect(!text.contains(Self.password), "\(name) printed the password")
                    #expect(!text.isEmpty, "\(name) printed nothing: the check would see nothing")
                }
                #expect(outputs["init-bad"]?.contains("127.0.0.1") == true, "\(outputs["init-bad"] ?? "")")
            }
        }
    }
}
