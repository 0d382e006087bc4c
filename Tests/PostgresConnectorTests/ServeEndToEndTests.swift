import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// `realm-adapter serve` and `realm-adapter run` on one store, each a process of its own, or
    /// `run --serve` alone: a Postgres row is in the next GraphQL query, and a GraphQL mutation
    /// reaches Postgres.
    @Suite struct ServeEndToEndTests {
        static let schema =
            #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "origin": "string?"}}]"#

        @Test(.timeLimit(.minutes(1)), arguments: [false, true])
        func mutationsReachPostgresAndPostgresChangesReachQueries(together: Bool) async throws {
            try await TestServer.withFreshDatabase { settings in
                let (dir, configFile) = try DaemonProcess.workspace(settings, schema: Self.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let port = freePort()
                try DaemonProcess.edit(
                    configFile, replacing: #""schema": "#, with: #""server": {"port": \#(port)}, "schema": "#)
                let key = "serve-end-to-end-signing-key-0123456789"
                var env = ProcessInfo.processInfo.environment
                env["REALM_ADAPTER_SIGNING_KEY"] = key
                let cli = ChildProcess.built("realm-adapter")
                let added = try await ChildProcess.run(
                    cli, ["user", "add", "backend", "--admin", "--config", configFile], input: "backend-password\n",
                    environment: env)
                #expect(added.status == 0, "\(added.stderr)")
                let token = try await ChildProcess.run(
                    cli, ["user", "token", "backend", "--config", configFile], environment: env
                )
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)

                setenv("REALM_ADAPTER_SIGNING_KEY", key, 1)
                let daemon = try DaemonProcess(
                    config: configFile, log: dir + "/daemon.log", arguments: together ? ["--serve"] : [])
                try await daemon.waitUntilSyncing()
                let serve =
                    together
                    ? nil
                    : try ChildProcess(
                        cli, ["serve", "--config", configFile], environment: env, stdout: dir + "/serve.log",
                        stderr: dir + "/serve.log")
                defer {
                    serve?.signal(SIGTERM)
                    serve?.reap()
                }
                func graphQL(_ query: String) async throws -> String {
                    let body = String(
                        decoding: try JSONSerialization.data(withJSONObject: ["query": query]), as: UTF8.self)
                    return try await ChildProcess.run(
                        "/usr/bin/curl",
                        [
                            "-s", "-X", "POST", "http://127.0.0.1:\(port)/graphql/SQLDemo", "-H",
                            "Authorization: \(token)", "-H", "Content-Type: application/json", "--data-binary", body,
                        ]
                    ).stdout
                }
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }

                // Postgres → Realm → a query.
                try await pg.session { s in _ = try s.query(#"INSERT INTO "Item" VALUES (7, 1, 'db')"#) }
                try await eventually("the row in a query") {
                    (try? await graphQL("{ items { id n origin } }"))
                        == #"{"data":{"items":[{"id":7,"n":1,"origin":"db"}]}}"#
                        + "\n"
                }
                // A mutation → the Realm → Postgres, once each.
                let created = try await graphQL(#"mutation { createItem(input: {id: 8, n: 2, origin: "app"}) { id } }"#)
                #expect(created == #"{"data":{"createItem":{"id":8}}}"# + "\n", "\(created)")
                let updated = try await graphQL(
                    "mutation { createItem(input: {id: 7, n: 3}, updatePolicy: MODIFIED) { n } }")
                #expect(updated == #"{"data":{"createItem":{"n":3}}}"# + "\n", "\(updated)")
                try await eventually("both mutations in Postgres") {
                    try await pg.session { s in
                        try s.query(#"SELECT id, n, origin FROM "Item" ORDER BY id"#).rows
                    } == [["7", "3", "db"], ["8", "2", "app"]]
                }
                #expect(await daemon.terminate() == 0)
            }
        }
    }
}
