import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// A row written in Postgres reaches a webhook as a change event, through the real daemon
    /// (`realm-adapter run` with events.webhooks) and a real HTTP endpoint.
    @Suite struct WebhookEndToEndTests {
        static let schema =
            #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "origin": "string"}}]"#

        @Test(.timeLimit(.minutes(1)))
        func aPostgresChangeReachesAWebhook() async throws {
            try await TestServer.withFreshDatabase { settings in
                let receiver = try await WebhookReceiver(secret: "hush")
                let (dir, configFile) = try DaemonProcess.workspace(settings, schema: Self.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                try DaemonProcess.edit(
                    configFile, replacing: #""schema": "#,
                    with: #""events": {"webhooks": [{"pathRegex": "^/SQLDemo$", "url": ""#
                        + receiver.url("/ok").absoluteString + #"", "secretEnv": "HOOK_SECRET"}]}, "schema": "#)
                setenv("HOOK_SECRET", "hush", 1)
                let daemon = try DaemonProcess(config: configFile, log: dir + "/daemon.log")
                try await daemon.waitUntilSyncing()
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in _ = try s.query(#"INSERT INTO "Item" VALUES (7, 1, 'db')"#) }
                try await pg.session { s in _ = try s.query(#"UPDATE "Item" SET n = 2 WHERE id = 7"#) }
                try await eventually("two deliveries") { receiver.requests.count >= 2 }
                // A delivery is done when its answer is back and the webhook's cursor passed it; a
                // SIGTERM in between leaves it to be sent again (at least once), which `status`
                // would count. The receiver counts a request before it answers.
                func status() async throws -> (status: Int32, stdout: String, stderr: String) {
                    try await ChildProcess.run(
                        ChildProcess.built("realm-adapter"), ["status", "--config", configFile],
                        environment: ProcessInfo.processInfo.environment.merging(["HOOK_SECRET": "hush"]) { $1 })
                }
                let delivered = "webhook \(receiver.url("/ok").absoluteString): 0 transaction(s) to deliver"
                try await eventually("both deliveries recorded") { try await status().stdout.contains(delivered) }
                #expect(await daemon.terminate() == 0)
                let requests = try receiver.requests.map { try JSONValue(parsing: $0) }
                #expect(requests.allSatisfy { $0["signed"] == .bool(true) })
                let inserted = requests[0]["body"]?["changes"]?["Item"]?["inserted"]
                #expect(
                    inserted
                        == .array([
                            .object([
                                .init("_identity", .int(7)), .init("id", .int(7)), .init("n", .int(1)),
                                .init("origin", .string("db")),
                            ])
                        ]))
                let body = requests[1]["body"]
                #expect(body?["origin"] == .string("adapter:pg"))
                guard case .array(let modified)? = body?["changes"]?["Item"]?["modified"] else {
                    Issue.record("no modified items: \(String(describing: body))")
                    return
                }
                #expect(
                    modified.first?["changed"]
                        == .object([.init("n", .object([.init("before", .int(1)), .init("after", .int(2))]))]))
                let after = try await status()
                #expect(after.stdout.contains(delivered), "\(after.stdout)\(after.stderr)")
            }
        }
    }
}
