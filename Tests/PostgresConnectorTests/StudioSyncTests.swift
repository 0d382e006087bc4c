import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// Studio with `run` syncing a Postgres database, in a real browser (`Support/studio/studio.py`,
    /// mode sync): a row inserted in Postgres appears on the open page without a reload, an edit
    /// made in Studio reaches Postgres, and a change Postgres rejects, which stops the daemon, is
    /// moved to the dead letters from the Sync page of a `serve` on the same configuration.
    @Suite struct StudioSyncTests {
        static let schema =
            #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "origin": "string?"}}]"#

        static func script() -> String {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Support/studio/studio.py").path
        }

        static var shots: String {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/artifacts/studio/sync").path
        }

        @Test(.timeLimit(.minutes(2))) func studioFollowsAndEditsASyncedRealm() async throws {
            try await TestServer.withFreshDatabase { settings in
                let (dir, configFile) = try DaemonProcess.workspace(settings, schema: Self.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let port = freePort()
                try DaemonProcess.edit(
                    configFile, replacing: #""schema": "#, with: #""server": {"port": \#(port)}, "schema": "#)
                var env = ProcessInfo.processInfo.environment
                env["REALM_ADAPTER_SIGNING_KEY"] = "studio-sync-signing-key-0123456789abcdef"
                let cli = ChildProcess.built("realm-adapter")
                let added = try await ChildProcess.run(
                    cli, ["user", "add", "alice", "--admin", "--config", configFile], input: "alice-password\n",
                    environment: env)
                #expect(added.status == 0, "\(added.stderr)")
                let daemon = try DaemonProcess(config: configFile, log: dir + "/daemon.log")
                try await daemon.waitUntilSyncing()
                let serve = try ChildProcess(
                    cli, ["serve", "--config", configFile], environment: env, stdout: dir + "/serve.log",
                    stderr: dir + "/serve.log")
                defer {
                    serve.signal(SIGTERM)
                    serve.reap()
                }
                try await eventually("serve listening") {
                    try await ChildProcess.run(
                        "/usr/bin/curl",
                        ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/studio"]
                    ).stdout == "303"
                }
                let dsn =
                    "host=\(settings.host ?? "127.0.0.1") port=\(settings.port ?? 5432) "
                    + "user=\(settings.user ?? "postgres") dbname=\(settings.database ?? "")"
                let r = try await ChildProcess.run(
                    "/usr/bin/env", ["python3", Self.script(), "http://127.0.0.1:\(port)", Self.shots, "sync", dsn])
                let passed = r.status == 0 && !r.stdout.contains("FAIL")
                #expect(passed, "\(r.stdout)\(r.stderr.suffix(3000))")
                // The daemon stopped at the rejected change (exit 1).
                if passed { #expect(await daemon.process.wait() == 1) } else { _ = await daemon.terminate() }
            }
        }
    }
}
