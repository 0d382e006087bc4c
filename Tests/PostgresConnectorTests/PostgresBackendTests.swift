import Foundation
import PostgresConnector
import PostgresStore
import RealmAdapter
import Testing

extension PostgresIntegration {
    /// The Postgres store's backend: commits heard by other processes by `NOTIFY` (not only by
    /// the fallback poll), and connections made again when the server drops them.
    @Suite struct PostgresBackendTests {
        /// The server ends every connection of the store (as a restart does): the next read and
        /// write connect again and succeed, and nothing half-done is left.
        @Test(.timeLimit(.minutes(1)))
        func connectionsTheServerEndedAreMadeAgain() async throws {
            try await TestServer.withFreshDatabase { settings in
                let backend = try PostgresBackend.open(settings, logger: .init(label: "store"))
                defer { backend.close() }
                let store = RealmStore(backend: backend, location: "pg")
                let note = ObjectSchema(
                    name: "Note", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))])
                // An object inserted before: the store keeps how it inserts Notes past the transaction.
                try store.write(to: "/notes", origin: "t") { tx in
                    try tx.addType(note)
                    try tx.create("Note", ["id": 0])
                }
                #expect(try store.realmPaths() == ["/notes"])
                let admin = try await PostgresConnection.connect(TestServer.settings)
                defer { admin.close() }
                let ended = try await admin.session { s in
                    try s.query(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
                        [settings.database!]
                    ).rows[0][0]
                }
                #expect(ended != "0")
                try store.write(to: "/notes", origin: "t") { tx in try tx.create("Note", ["id": 1]) }
                #expect(try store.count(of: "Note", in: "/notes") == 2)
                #expect(try store.version(of: "/notes") == 2)
            }
        }

        /// An INSERT that fails inside a write transaction (a key already there) is undone alone,
        /// as in SQLite: the transaction goes on and commits the rest. The statement runs in one
        /// round trip with its savepoint, prepared once: the first time and after.
        @Test(.timeLimit(.minutes(1)))
        func aFailedInsertIsUndoneAloneAndTheTransactionGoesOn() async throws {
            try await TestServer.withFreshDatabase { settings in
                let backend = try PostgresBackend.open(settings, logger: .init(label: "store"))
                defer { backend.close() }
                try backend.write { db in try db.execute(sql: "CREATE TABLE t (k bigint PRIMARY KEY, v text)") }
                for round in 0..<2 {
                    let kinds = try backend.write { db -> [StoreError.Kind?] in
                        let insert = "INSERT INTO t (k, v) VALUES (?, ?)"
                        var kinds: [StoreError.Kind?] = []
                        for k in [1, 1, 2, 2] {
                            do {
                                try db.cachedStatement(sql: insert).execute(arguments: [Int64(10 * round + k), "v\(k)"])
                                kinds.append(nil)
                            } catch let e as StoreError {
                                kinds.append(e.kind)
                            }
                        }
                        return kinds
                    }
                    #expect(kinds == [nil, .constraint, nil, .constraint])
                }
                let rows = try backend.read { db in try String.fetchAll(db, sql: "SELECT v FROM t ORDER BY k") }
                #expect(rows == ["v1", "v2", "v1", "v2"])
            }
        }

        /// A lock whose session ended while its holder lives (a network cut, a server that ended
        /// the connection): the holder's next write is refused and changes nothing (the fence),
        /// another process takes the lock, and the holder writes again once it let go of it.
        @Test(.timeLimit(.minutes(1)))
        func aProcessThatLostItsLockWritesNothing() async throws {
            try await TestServer.withFreshDatabase { settings in
                let backend = try PostgresBackend.open(settings, logger: .init(label: "store"))
                defer { backend.close() }
                let store = RealmStore(backend: backend, location: "pg")
                let note = ObjectSchema(
                    name: "Note", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))])
                try store.write(to: "/notes", origin: "t") { tx in try tx.addType(note) }
                var lock = try backend.exclusiveLock("daemon-x")
                #expect(lock != nil)
                try store.write(to: "/notes", origin: "t") { tx in try tx.create("Note", ["id": 1]) }

                #expect(try await TestServer.endLockSessions(in: settings.database!) == 1)
                #expect {
                    try store.write(to: "/notes", origin: "t") { tx in try tx.create("Note", ["id": 2]) }
                } throws: { e in
                    "\(e)".contains("no longer holds its lock on the store")
                }
                #expect(try store.count(of: "Note", in: "/notes") == 1)

                let other = try PostgresBackend.open(settings, logger: .init(label: "other"))
                defer { other.close() }
                var taken = try other.exclusiveLock("daemon-x")
                #expect(taken != nil, "the lock of the ended session was not free for another process")
                lock = nil
                try store.write(to: "/notes", origin: "t") { tx in try tx.create("Note", ["id": 2]) }
                #expect(try store.count(of: "Note", in: "/notes") == 2)
                taken = nil
                #expect(lock == nil && taken == nil)
            }
        }

        @Test(.timeLimit(.minutes(1)))
        func aCommitByAnotherProcessIsHeardAndNothingElseIs() async throws {
            try await TestServer.withFreshDatabase { settings in
                let writer = try PostgresBackend.open(settings, logger: .init(label: "writer"))
                defer { writer.close() }
                // No fallback within the test: only a notification can make it say yes.
                let probe = PostgresCommitProbe(
                    settings: settings, logger: .init(label: "probe"), fallback: .seconds(3600))
                #expect(probe.committedSinceLastCheck(), "the first check cannot know")
                #expect(!probe.committedSinceLastCheck())

                struct Rollback: Error {}
                #expect(throws: Rollback.self) {
                    try writer.write(.asOpened) { db in
                        try db.execute(sql: "INSERT INTO metadata (key, value) VALUES ('a', '1')")
                        throw Rollback()
                    }
                }
                try await Task.sleep(for: .milliseconds(200))
                #expect(!probe.committedSinceLastCheck(), "a transaction rolled back notifies no one")

                try writer.write(.asOpened) { db in
                    try db.execute(sql: "INSERT INTO metadata (key, value) VALUES ('b', '2')")
                }
                try await eventually("the commit to be heard", timeout: .seconds(5)) {
                    probe.committedSinceLastCheck()
                }
                #expect(!probe.committedSinceLastCheck())
            }
        }

        /// A transaction begins with its first statement, in its round trip: one that sends
        /// nothing is never begun, and a write transaction that sends nothing wakes no one.
        @Test(.timeLimit(.minutes(1)))
        func aTransactionThatSendsNothingBeginsNothing() async throws {
            try await TestServer.withFreshDatabase { settings in
                let writer = try PostgresBackend.open(settings, logger: .init(label: "writer"))
                defer { writer.close() }
                let probe = PostgresCommitProbe(
                    settings: settings, logger: .init(label: "probe"), fallback: .seconds(3600))
                _ = probe.committedSinceLastCheck()
                try writer.write(.asOpened) { _ in }
                try writer.read { _ in }
                try await Task.sleep(for: .milliseconds(200))
                #expect(!probe.committedSinceLastCheck(), "a write transaction that sent nothing notifies no one")
                // Reads on the same connections go on as before, and see what was committed.
                for n in 1...3 {
                    try writer.write(.asOpened) { db in
                        try db.execute(sql: "INSERT INTO metadata (key, value) VALUES (?, 'x')", arguments: ["k\(n)"])
                    }
                    let count = try writer.read { db in
                        try db.cachedStatement(sql: "SELECT count(*) FROM metadata WHERE key LIKE 'k%'").firstInteger([]
                        )
                    }
                    #expect(count == Int64(n))
                }
            }
        }

        /// A write whose outcome nothing waits for is held back and sent with the transaction's
        /// next statement or its commit, in order: what follows sees it, its failure fails the
        /// whole transaction where it is found (never as a constraint of the statement it went
        /// with), and a transaction of such writes alone commits them and is heard.
        @Test(.timeLimit(.minutes(1)))
        func heldBackWritesGoWithTheNextStatementOrTheCommit() async throws {
            try await TestServer.withFreshDatabase { settings in
                let store = try PostgresBackend.open(settings, logger: .init(label: "store"))
                defer { store.close() }
                let probe = PostgresCommitProbe(
                    settings: settings, logger: .init(label: "probe"), fallback: .seconds(3600))
                _ = probe.committedSinceLastCheck()
                let insert = "INSERT INTO metadata (key, value) VALUES (?, 'x')"
                func count(_ db: any StoreConnection, _ key: String) throws -> Int64? {
                    try db.cachedStatement(sql: "SELECT count(*) FROM metadata WHERE key = ?").firstInteger([key])
                }
                // Held back alone: committed at the end, and heard.
                try store.write(.asOpened) { db in try db.cachedStatement(sql: insert).executeDeferred(arguments: ["a"])
                }
                try await eventually("the commit to be heard", timeout: .seconds(5)) { probe.committedSinceLastCheck() }
                // Seen by the statement that follows it in the same transaction.
                let seen = try store.write(.asOpened) { db in
                    try db.cachedStatement(sql: insert).executeDeferred(arguments: ["b"])
                    return try count(db, "b")
                }
                #expect(seen == 1)
                // A duplicate held back is not its own statement's failure: it is found at the next
                // statement, fails the transaction, and is not a constraint that statement's caller
                // may take for its own and go on from.
                var caught: StoreError?
                #expect(throws: StoreError.self) {
                    try store.write(.asOpened) { db in
                        try db.cachedStatement(sql: insert).executeDeferred(arguments: ["c"])
                        try db.cachedStatement(sql: insert).executeDeferred(arguments: ["a"])
                        do { try db.cachedStatement(sql: insert).execute(arguments: ["d"]) } catch let e as StoreError {
                            caught = e
                            if e.isConstraint { return }
                            throw e
                        }
                    }
                }
                #expect(caught?.isConstraint == false)
                #expect(caught?.message.contains("duplicate key") == true)
                // Found at the commit: nothing of the transaction stays.
                #expect(throws: StoreError.self) {
                    try store.write(.asOpened) { db in
                        try db.cachedStatement(sql: insert).execute(arguments: ["e"])
                        try db.cachedStatement(sql: insert).executeDeferred(arguments: ["a"])
                    }
                }
                let left = try store.read { db in
                    try ["c", "d", "e"].map { try count(db, $0) }
                }
                #expect(left == [0, 0, 0])
            }
        }

        /// A connection that breaks after a transaction began is the transaction's failure: the
        /// body is not run again (the process's bookkeeping of its first run would be stale),
        /// even when writes held back went with the round trip that found it broken. A
        /// connection found broken at the first round trip is made again and the body run anew.
        @Test(.timeLimit(.minutes(1)))
        func onlyATransactionThatNeverBeganIsTriedAgain() async throws {
            try await TestServer.withFreshDatabase { settings in
                let store = try PostgresBackend.open(settings, logger: .init(label: "store"))
                defer { store.close() }
                let admin = try PostgresConnection.connectSync(TestServer.settings)
                defer { admin.close() }
                func end(_ pid: Int64?) throws {
                    _ = try admin.sessionSync {
                        try $0.query("SELECT pg_terminate_backend($1::int)", [pid.map(String.init)])
                    }
                }
                var runs = 0
                let error = #expect(throws: StoreError.self) {
                    try store.write(.asOpened) { db in
                        runs += 1
                        try end(try db.cachedStatement(sql: "SELECT pg_backend_pid()").firstInteger([]))
                        try db.cachedStatement(sql: "INSERT INTO metadata (key, value) VALUES ('a', '1')")
                            .executeDeferred(arguments: [])
                        try db.execute(sql: "SELECT 1")
                    }
                }
                #expect(runs == 1)
                #expect(error?.kind == .unreachable)
                // Broken before the transaction: found at its first round trip, tried again.
                let pid = try store.read { db in try db.cachedStatement(sql: "SELECT pg_backend_pid()").firstInteger([])
                }
                try end(pid)
                try await Task.sleep(for: .milliseconds(100))
                runs = 0
                let keys = try store.read { db in
                    runs += 1
                    return try db.cachedStatement(sql: "SELECT count(*) FROM metadata WHERE key = 'a'").firstInteger([])
                }
                #expect(runs == 2)
                #expect(keys == 0)
                // A write of held-back writes alone, its connection broken before: tried again, once.
                let writer = try store.write(.asOpened) { db in
                    try db.cachedStatement(sql: "SELECT pg_backend_pid()").firstInteger([])
                }
                try end(writer)
                try await Task.sleep(for: .milliseconds(100))
                try store.write(.asOpened) { db in
                    try db.cachedStatement(sql: "INSERT INTO metadata (key, value) VALUES ('b', '1')")
                        .executeDeferred(arguments: [])
                }
                let b = try store.read { db in
                    try db.cachedStatement(sql: "SELECT count(*) FROM metadata WHERE key = 'b'").firstInteger([])
                }
                #expect(b == 1)
            }
        }

        /// The BEGIN sent with a read's first statement does not make that statement a prepared
        /// one: reads run unnamed, as they did, and use none of a connection's 500 slots.
        @Test(.timeLimit(.minutes(1)))
        func aReadPreparesNothing() async throws {
            try await TestServer.withFreshDatabase { settings in
                let store = try PostgresBackend.open(settings, logger: .init(label: "store"))
                defer { store.close() }
                for n in 1...3 {
                    _ = try store.read { db in try db.cachedStatement(sql: "SELECT \(n)").firstInteger([]) }
                }
                let prepared = try store.read { db in
                    try db.cachedStatement(sql: "SELECT count(*) FROM pg_prepared_statements").firstInteger([])
                }
                #expect(prepared == 0)
            }
        }

        /// A store's change stream in one process reports a transaction another process commits.
        @Test(.timeLimit(.minutes(1)))
        func aStoreHearsAnotherStoresTransactions() async throws {
            try await TestServer.withFreshDatabase { settings in
                let (a, b) = (
                    try PostgresBackend.open(settings, logger: .init(label: "a")),
                    try PostgresBackend.open(settings, logger: .init(label: "b"))
                )
                defer {
                    a.close()
                    b.close()
                }
                let (storeA, storeB) = (
                    RealmStore(backend: a, location: "a"), RealmStore(backend: b, location: "b")
                )
                var changes = storeB.changes().makeAsyncIterator()
                try await Task.sleep(for: .milliseconds(200))  // its first poll sets where it starts
                try storeA.write(to: "/notes", origin: "elsewhere") { tx in
                    try tx.addType(
                        ObjectSchema(
                            name: "Note", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))]))
                }
                let change = await changes.next()
                #expect(change?.path == "/notes" && change?.origins == ["elsewhere"])
            }
        }
    }
}
