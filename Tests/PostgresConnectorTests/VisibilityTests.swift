import Foundation
import PostgresConnector
import RealmAdapter
import Testing

extension TestServer {
    /// Runs `body` while commits of sessions that ask for `synchronous_commit = on` wait for a
    /// synchronous standby that does not exist. Such a commit is in the WAL, and so in the change
    /// stream, but other sessions do not see it until its wait is cancelled: the window between
    /// the two, held open. Every other session commits as before (`synchronous_commit = local`).
    static func holdingSynchronousCommits<T>(_ body: () async throws -> T) async throws -> T {
        let admin = try await PostgresConnection.connect(settings)
        defer { admin.close() }
        func configure(_ statements: [String]) async throws {
            try await admin.session { s in
                for statement in statements { try s.execute(statement) }
                try s.execute("SELECT pg_reload_conf()")
            }
            // New sessions read the configuration once the postmaster has reloaded it.
            let want = statements.contains { $0.contains("RESET") } ? "" : "realm_adapter_test_nobody"
            for _ in 0..<200 {
                let probe = try await PostgresConnection.connect(settings)
                defer { probe.close() }
                let now = try await probe.session { s in try s.query("SHOW synchronous_standby_names").rows[0][0] }
                if now == want { return }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("the server did not reload its configuration")
        }
        try await configure([
            "ALTER SYSTEM SET synchronous_commit = 'local'",
            "ALTER SYSTEM SET synchronous_standby_names = 'realm_adapter_test_nobody'",
        ])
        let reset = ["ALTER SYSTEM RESET synchronous_standby_names", "ALTER SYSTEM RESET synchronous_commit"]
        do {
            let value = try await body()
            try await configure(reset)
            return value
        } catch {
            try? await configure(reset)
            throw error
        }
    }
}

extension PostgresIntegration.SyncTests {
    /// The stream delivers a transaction as soon as its commit is in the WAL, which is before
    /// other sessions see it. Reads made for it (here the link table's rows, which a list is
    /// rebuilt from) must wait until they do: read at once, they found the rows as they were, and
    /// the Realm kept the old list for good (seen as a flaky test, 1 run in 20 under load).
    @Test(.timeLimit(.minutes(1)))
    func readsForAStreamedTransactionSeeIt() async throws {
        try await SyncHarness.run(schema: Self.routeSchema) { h in
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                for t in h.config.schema.types { try tx.addType(t) }
                for i in 1...3 { try tx.create("Stop", ["id": .int(Int64(i)), "name": .string("S\(i)")]) }
                try tx.create("Route", ["id": "R1", "stops": [1, 2]])
            }
            try await eventually("R1's stops in the link table") {
                try await h.sql("SELECT count(*) FROM \"Route_stops\"") == [["2"]]
            }
            let app = try await PostgresConnection.connect(h.settings)
            defer { app.close() }
            let pid = try await app.session { s in try s.query("SELECT pg_backend_pid()").rows[0][0]! }
            try await TestServer.holdingSynchronousCommits {
                let commit = Task {
                    try await app.session { s in
                        try s.execute("SET synchronous_commit = on")
                        try s.execute("INSERT INTO \"Route_stops\" VALUES ('R1', 2, 3)")
                    }
                }
                // The commit is in the WAL and waits for the standby, unseen by other sessions.
                try await eventually("the commit waiting for the standby") {
                    try await h.sql("SELECT wait_event FROM pg_stat_activity WHERE pid = $1", [pid]) == [["SyncRep"]]
                }
                #expect(try await h.sql("SELECT count(*) FROM \"Route_stops\"") == [["2"]])
                // Time for the daemon to receive it (and, before the fix, to read the old rows).
                try await Task.sleep(for: .milliseconds(500))
                _ = try await h.sql("SELECT pg_cancel_backend($1)", [pid])
                _ = try? await commit.value  // cancelled waiting: committed locally all the same
            }
            #expect(try await h.sql("SELECT count(*) FROM \"Route_stops\"") == [["3"]])
            try await eventually("the appended stop in the Realm") {
                try h.store.list("stops", of: "Route", identity: "R1", in: "/SQLDemo") == [1, 2, 3]
            }
        }
    }
}
