import ConnectorScenarios
import Foundation
import GRDB
import RealmAdapter
import SQLiteConnector
import Testing

/// A fresh SQLite database file, written to as an app would (its own connection).
struct SQLiteScenarioDatabase: ScenarioDatabase {
    let file: String
    let app: DatabaseQueue

    init() throws {
        file = NSTemporaryDirectory() + "realm-adapter-sqlite-\(UUID().uuidString.prefix(8)).sqlite"
        var c = GRDB.Configuration()
        c.busyMode = .timeout(10)
        app = try DatabaseQueue(path: file, configuration: c)
        try app.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
    }

    var connectors: ConnectorRegistry { .sqlite }
    /// Its change log, polled, may join transactions committed between two polls.
    static var keepsTransactionsApart: Bool { false }
    var databaseSection: String {
        #"{"type": "sqlite", "file": "\#(file)", "createSchema": true, "pollIntervalMs": 5, "#
            + #""retry": {"attempts": 0, "delayMs": 20, "maxDelayMs": 200}}"#
    }

    func sql(_ text: String) async throws -> [[String?]] {
        try await app.write { db in
            let statements = try db.allStatements(sql: text)
            var rows: [[String?]] = []
            while let s = try statements.next() {
                rows = try Row.fetchAll(s).map { r in
                    r.databaseValues.map { v in v.isNull ? nil : String(describing: v.storage.value!) }
                }
            }
            return rows
        }
    }

    func remove() {
        for suffix in ["", "-wal", "-shm", ".realm-adapter.lock"] {
            try? FileManager.default.removeItem(atPath: file + suffix)
        }
    }
}

/// The core's scenarios against the SQLite connector: no server needed.
@Suite(.serialized) struct SQLiteScenarioTests {
    @Test(.timeLimit(.minutes(1)), arguments: Scenarios.all(SQLiteScenarioDatabase.self).map(\.0))
    func scenario(_ name: String) async throws {
        let db = try SQLiteScenarioDatabase()
        defer { db.remove() }
        let run = Scenarios.all(SQLiteScenarioDatabase.self).first { $0.0 == name }!.1
        try await run(db)
    }
}
