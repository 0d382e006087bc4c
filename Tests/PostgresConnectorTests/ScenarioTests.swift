import ConnectorScenarios
import Foundation
import PostgresConnector
import RealmAdapter
import Testing

/// A fresh Postgres database, written to as an app would (a connection of its own).
struct PostgresScenarioDatabase: ScenarioDatabase {
    let settings: PostgresSettings
    let app: PostgresConnection
    /// Where the Realms are: a directory, or a database of their own on the test server.
    var storeKind = StoreKind.sqlite

    var connectors: ConnectorRegistry { .postgres }
    var databaseSection: String {
        #"{"type": "postgres", "host": "\#(settings.host!)", "port": \#(settings.port!), "#
            + #""user": "\#(settings.user!)", "database": "\#(settings.database!)", "#
            + #""slotName": "\#(settings.database!)", "createSchema": true, "#
            + #""retry": {"attempts": 0, "delayMs": 50, "maxDelayMs": 500}}"#
    }

    func sql(_ text: String) async throws -> [[String?]] { try await app.sql(text) }

    static var writesConcurrently: Bool { true }

    func makeStore(in directory: String) async throws -> ScenarioStore {
        let t = try await TestStore(storeKind, in: directory, "scenario")
        return ScenarioStore(location: t.location, store: t.store, remove: { await t.remove() })
    }

    func openTransaction(_ text: String) async throws -> @Sendable () async throws -> Void {
        let c = try await PostgresConnection.connect(settings)
        _ = try await c.sql("BEGIN")
        _ = try await c.sql(text)
        return {
            _ = try await c.sql("COMMIT")
            c.close()
        }
    }
}

extension PostgresIntegration {
    /// The core's scenarios (the same ones the SQLite connector runs in plain `swift test`) against
    /// Postgres, with the Realms in a directory and in a Postgres store.
    @Suite struct ScenarioTests {
        @Test(
            .timeLimit(.minutes(2)),
            arguments: StoreKind.allCases, Scenarios.all(PostgresScenarioDatabase.self).map(\.0))
        func scenario(_ store: StoreKind, _ name: String) async throws {
            let run = Scenarios.all(PostgresScenarioDatabase.self).first { $0.0 == name }!.1
            try await TestServer.withFreshDatabase("scenario_\(abs(name.hashValue) % 100_000)") { settings in
                let app = try await PostgresConnection.connect(settings)
                defer { app.close() }
                try await run(PostgresScenarioDatabase(settings: settings, app: app, storeKind: store))
            }
        }
    }
}
