import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

/// The test server, from the environment `scripts/test.sh` sets (through `scripts/pg.sh`).
/// Without it the Postgres tests are skipped: run `scripts/test.sh`, which starts one.
enum TestServer {
    static let environment = ProcessInfo.processInfo.environment

    static var isAvailable: Bool { environment["REALM_ADAPTER_PG_PORT"] != nil }

    /// In CI (`CI=true`) the integration suite always runs: without a server its tests fail
    /// rather than skip, so CI cannot pass on skipped tests.
    static var isRequired: Bool { environment["CI"] == "true" }

    static var settings: PostgresSettings {
        PostgresSettings(
            host: environment["REALM_ADAPTER_PG_HOST"] ?? "127.0.0.1",
            port: Int(environment["REALM_ADAPTER_PG_PORT"] ?? "") ?? 54329,
            user: environment["REALM_ADAPTER_PG_USER"] ?? "postgres",
            database: environment["REALM_ADAPTER_PG_DATABASE"] ?? "postgres")
    }

    /// A fresh database for one test, dropped by the caller with `drop`.
    static func freshDatabase(_ name: String = #function) async throws -> (PostgresSettings, String) {
        let db =
            "t_" + name.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(30) + "_"
            + UUID().uuidString.prefix(6).lowercased()
        let admin = try await PostgresConnection.connect(settings)
        defer { admin.close() }
        try await admin.session { s in try s.execute("CREATE DATABASE \(db)") }
        var s = settings
        s.database = db
        return (s, db)
    }

    /// Runs `body` with a fresh database, dropped afterwards whatever happens.
    static func withFreshDatabase<T>(_ name: String = #function, _ body: (PostgresSettings) async throws -> T)
        async throws -> T
    {
        let (settings, db) = try await freshDatabase(name)
        do {
            let value = try await body(settings)
            await drop(db)
            return value
        } catch {
            await drop(db)
            throw error
        }
    }

    static func drop(_ db: String) async {
        guard let admin = try? await PostgresConnection.connect(settings) else { return }
        defer { admin.close() }
        // Slots outlive their database and keep WAL: wait for the streams to let go, then drop them.
        for _ in 0..<100 {
            let remaining =
                (try? await admin.session { s in
                    try s.query(
                        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active",
                        [db])
                    try s.query(
                        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active",
                        [db])
                    return try s.query("SELECT count(*) FROM pg_replication_slots WHERE database = $1", [db]).rows[0][0]
                }) ?? "0"
            if remaining == "0" { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        _ = try? await admin.session { s in
            try s.execute("DROP DATABASE IF EXISTS \(db) WITH (FORCE)")
            // Replication origins belong to the whole server and each holds a replication state slot
            // (64 by default): every origin named after this database goes, whatever its adapter's name.
            try s.query(
                "SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin WHERE strpos(roname, $1) > 0",
                [db])
        }
    }
}

/// Every test that needs the Postgres test server lives in this suite: skipped without the
/// server, and run one at a time (they start daemons, restart servers, and time things on a
/// 2-core machine).
@Suite(
    .enabled(
        if: TestServer.isAvailable || TestServer.isRequired,
        "needs Postgres: run scripts/test.sh, which starts one (scripts/pg.sh)"),
    .serialized)
enum PostgresIntegration {}

/// Says plainly why every integration test fails in CI when no test server was started.
@Test func ciHasTheTestPostgres() {
    guard TestServer.isRequired else { return }
    #expect(
        TestServer.isAvailable, "CI=true but REALM_ADAPTER_PG_PORT is not set: scripts/test.sh starts the test Postgres"
    )
}

/// A Postgres cluster of a test's own (scripts/pg.sh with its own directory and port), for
/// tests that restart or reconfigure the server without disturbing the others.
struct OwnCluster {
    let directory: String
    let port: Int
    /// Connection settings for its `postgres` database.
    var settings: PostgresSettings {
        var s = TestServer.settings
        s.port = port
        s.database = "postgres"
        return s
    }

    /// Runs `body` with a started cluster; stops and removes it afterwards.
    static func with<T>(_ name: String, _ body: (OwnCluster) async throws -> T) async throws -> T {
        let cluster = OwnCluster(
            directory: NSTemporaryDirectory() + "realm-adapter-pg-\(name)-\(UUID().uuidString.prefix(6))",
            port: freePort())
        defer {
            try? cluster.pgctl("stop")
            try? FileManager.default.removeItem(atPath: cluster.directory)
        }
        try cluster.pgctl("start")
        return try await body(cluster)
    }

    /// `scripts/pg.sh COMMAND` for this cluster.
    func pgctl(_ command: String) throws {
        let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../scripts"
        ).standardizedFileURL.path
        try Self.shell("PGDEV_DIR='\(directory)' PGDEV_PORT=\(port) '\(scripts)/pg.sh' \(command)")
    }

    /// Runs a shell command, output discarded. system(3), not Foundation's Process: a server it
    /// starts outlives the script, and Process was seen to miss the script's exit then.
    static func shell(_ command: String) throws {
        let status = system(command + " >/dev/null 2>&1")
        guard status == 0 else { throw DaemonProcess.DaemonError("\(command) failed (status \(status))") }
    }
}

extension TestServer {
    /// Ends the sessions holding advisory locks in `database` (a store's lock connection lost)
    /// and waits until they let go of them: `pg_terminate_backend` only signals. Returns how
    /// many it ended.
    static func endLockSessions(in database: String) async throws -> Int {
        let admin = try await PostgresConnection.connect(settings)
        defer { admin.close() }
        let locks = """
            FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' \
            AND l.granted AND d.datname = $1
            """
        let ended = try await admin.session { s in
            try s.query("SELECT count(pg_terminate_backend(l.pid)) " + locks, [database]).rows[0][0]
        }
        try await eventually("the lock sessions to end") {
            try await admin.session { s in try s.query("SELECT count(*) " + locks, [database]).rows[0][0] == "0" }
        }
        return Int(ended ?? "") ?? 0
    }
}
