import ArgumentParser
import Foundation
import PostgresConnector

/// A database and a scratch directory of their own for one benchmark run. ``drop()`` removes
/// both, with the replication slots and origins made for the database.
struct ScratchDatabase {
    let name: String
    /// How to connect to it.
    let settings: PostgresSettings
    let directory: String
    private let admin: PostgresConnection

    /// Creates a database named `prefix` and a random number, and `scratch/<name>`.
    static func create(_ prefix: String, admin settings: PostgresSettings, scratch: String) async throws
        -> ScratchDatabase
    {
        let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        let directory = scratch + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let admin = try await PostgresConnection.connect(settings)
        try await admin.session { s in try s.execute("CREATE DATABASE \(name)") }
        var own = settings
        own.database = name
        return ScratchDatabase(name: name, settings: own, directory: directory, admin: admin)
    }

    func drop() {
        try? FileManager.default.removeItem(atPath: directory)
        _ = try? admin.sessionSync { s in
            try s.query(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1", [name])
            try s.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            try s.query(
                "SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin WHERE roname LIKE $1",
                ["realm_adapter_\(name)%"])
        }
        admin.close()
    }
}

extension PostgresSettings {
    /// The test server `scripts/pg.sh start` runs, from its environment, as its admin user on the
    /// `postgres` database.
    static func testServer() throws -> PostgresSettings {
        let env = ProcessInfo.processInfo.environment
        guard let port = env["REALM_ADAPTER_PG_PORT"].flatMap(Int.init) else {
            throw ValidationError("Start Postgres first: eval \"$(scripts/pg.sh start)\"")
        }
        return PostgresSettings(
            host: env["REALM_ADAPTER_PG_HOST"] ?? "127.0.0.1", port: port,
            user: env["REALM_ADAPTER_PG_USER"] ?? "postgres", database: "postgres")
    }
}
