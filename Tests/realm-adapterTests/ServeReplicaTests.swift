import Foundation
import TestSupport
import Testing

/// Replicas of `serve` on one Postgres store (issue 43): each answers the tokens the other
/// gave, sees the users the other's commands added, and a mutation sent to one reaches a
/// subscription held by the other.
@Suite struct ServeReplicaTests {
    static let environment = ProcessInfo.processInfo.environment

    /// A fresh database on the test server `scripts/pg.sh` started, as a store URL, and what
    /// drops it; nil without a server (outside CI, where one is required).
    static func freshStore() async throws -> (url: String, drop: () async -> Void)? {
        guard let port = environment["REALM_ADAPTER_PG_PORT"] else { return nil }
        let host = environment["REALM_ADAPTER_PG_HOST"] ?? "127.0.0.1"
        let user = environment["REALM_ADAPTER_PG_USER"] ?? "postgres"
        let database = "serve_replicas_\(UUID().uuidString.prefix(8).lowercased())"
        let created = try await psql("CREATE DATABASE \(database)")
        try #require(created.status == 0, "\(created.stderr)")
        return (
            "postgresql://\(user)@\(host):\(port)/\(database)",
            { _ = try? await psql("DROP DATABASE \(database) WITH (FORCE)") }
        )
    }

    /// SQL run by psql on the test server's `postgres` database, waited for here (in a deinit).
    static func psqlNow(_ sql: String) {
        let host = environment["REALM_ADAPTER_PG_HOST"] ?? "127.0.0.1"
        let user = environment["REALM_ADAPTER_PG_USER"] ?? "postgres"
        let port = environment["REALM_ADAPTER_PG_PORT"] ?? "54329"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        p.arguments = ["-X", "-q", "-h", host, "-p", port, "-U", user, "-d", "postgres", "-c", sql]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return }
        p.waitUntilExit()
    }

    /// SQL run by psql on the test server's `postgres` database.
    static func psql(_ sql: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        let host = environment["REALM_ADAPTER_PG_HOST"] ?? "127.0.0.1"
        let user = environment["REALM_ADAPTER_PG_USER"] ?? "postgres"
        let port = environment["REALM_ADAPTER_PG_PORT"] ?? "54329"
        return try await ChildProcess.run(
            "/usr/bin/psql", ["-X", "-q", "-h", host, "-p", port, "-U", user, "-d", "postgres", "-c", sql])
    }

    @Test(.timeLimit(.minutes(2)))
    func replicasShareUsersTokensAndChanges() async throws {
        guard let (url, drop) = try await Self.freshStore() else {
            if Self.environment["CI"] == "true" { Issue.record("no Postgres test server: run scripts/test.sh") }
            return
        }
        let a = try await ServeTests.Server(store: url)
        try await a.start()
        let b = try await ServeTests.Server(store: url, seeded: false)
        try await b.start()

        // A login at one replica is good at the other.
        guard case .success(let alice) = try await b.access(try await a.login("alice"), "/shop") else {
            Issue.record("alice's refresh token from one replica was refused by the other")
            return
        }
        // A user added through one replica's configuration logs in at the other.
        let added = try await b.cli(["user", "add", "dave", "--config", b.config], stdin: "dave-password\n")
        #expect(added.status == 0, "\(added.stderr)")
        _ = try await a.login("dave")
        // Every offer, through the other's configuration (its SQL once held SQLite's `WHERE 1`).
        let offers = try await a.cli(["permission", "offer", "list", "--config", a.config])
        #expect(offers.status == 0 && offers.stdout.contains("No offers."), "\(offers.stderr)")

        // A subscription held by one replica receives a mutation sent to the other.
        let out = b.dir + "/subscriber.out"
        let subscribe = #"{"type": "subscribe", "id": "1", "payload": {"query": "subscription { stops { id } }"}}"#
        let subscriber = try ChildProcess(
            "/usr/bin/env",
            [
                "python3", ServeTests.Server.script("probe.py"), "127.0.0.1", "\(b.port)", "/graphql/shop", "20",
                ServeTests.Server.hello(alice), subscribe,
            ],
            stdout: out, stderr: out + ".err")
        func received() -> String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        for _ in 0..<500 where !received().contains(#""type": "next""#) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(received().contains(#""type": "next""#), "\(received())")
        let created = try await a.graphQL(
            "/shop", alice, #"mutation { createStop(input: {id: 9, name: "Dock"}) { id } }"#)
        #expect(created == #"{"data": {"createStop": {"id": 9}}}"#)
        let sent = ContinuousClock.now
        for _ in 0..<500 where !received().contains(#"{"id": 9}"#) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(received().contains(#"{"id": 9}"#), "the other replica's subscriber got: \(received())")
        #expect(ContinuousClock.now - sent < .seconds(3))
        subscriber.signal(SIGTERM)
        subscriber.reap()
        await drop()
    }
}

/// A Postgres store's database that stops answering while `serve` runs: `/health/ready` says so
/// (503, naming the store), `realm_adapter_store_up{backend="postgres"}` drops to 0, and both
/// come back when the database does.
@Suite struct StoreHealthTests {
    @Test(.timeLimit(.minutes(2)))
    func aStoreThatDoesNotAnswerIsNotReadyAndComesBack() async throws {
        guard let (url, drop) = try await ServeReplicaTests.freshStore() else {
            if ServeReplicaTests.environment["CI"] == "true" {
                Issue.record("no Postgres test server: run scripts/test.sh")
            }
            return
        }
        let database = String(url.split(separator: "/").last!)
        let s = try await ServeTests.Server(store: url)
        let metricsPort = freePort()
        s.arguments = ["--metrics-port", "\(metricsPort)"]
        try await s.start()
        let sample = #"realm_adapter_store_up{backend="postgres"}"#
        func ready() async throws -> (status: Int, body: String) {
            try await ServeTests.Server.curl("http://127.0.0.1:\(metricsPort)", dir: s.dir, "GET", "/health/ready")
        }
        #expect(try await ready().status == 200)
        #expect(ServeTests.Server.sample(try await s.metrics(at: metricsPort), sample) == 1)

        let shut = try await ServeReplicaTests.psql(
            "ALTER DATABASE \(database) ALLOW_CONNECTIONS false; "
                + "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database)'")
        #expect(shut.status == 0, "\(shut.stderr)")
        let down = try await ready()
        #expect(down.status == 503 && down.body.contains("does not answer"), "\(down.body)")
        #expect(down.body.contains("postgres") && !down.body.contains("password"), "\(down.body)")
        #expect(ServeTests.Server.sample(try await s.metrics(at: metricsPort), sample) == 0)

        let opened = try await ServeReplicaTests.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(try await ready().status == 200)
        #expect(ServeTests.Server.sample(try await s.metrics(at: metricsPort), sample) == 1)
        s.process?.signal(SIGTERM)
        s.process?.reap()
        await drop()
    }
}
