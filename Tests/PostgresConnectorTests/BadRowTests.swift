import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// One bad row never halts sync for good.
    @Suite struct BadRowTests {
        static let schema = """
            [{"name": "Task", "primaryKey": "id", "properties": {"id": "int", "owner": "string", "tags": "string[]"}}]
            """

        /// A fresh database and workspace for `schema` (Realms at `path`), a connection to the
        /// database, and a daemon syncing it (its log `daemon-1.log`).
        static func withSyncingDaemon(
            _ schema: String, path: String = "/SQLDemo", name: String = #function,
            _ body: (_ dir: String, _ config: String, PostgresConnection, DaemonProcess) async throws -> Void
        ) async throws {
            try await TestServer.withFreshDatabase(name) { settings in
                let (dir, config) = try DaemonProcess.workspace(settings, schema: schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                try DaemonProcess.edit(config, replacing: #""path": "/SQLDemo""#, with: #""path": "\#(path)""#)
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-1.log")
                try await daemon.waitUntilSyncing()
                try await body(dir, config, pg, daemon)
            }
        }

        /// Database → Realm: a row no Realm can hold (a NULL in a text[] for a string[] property, a
        /// routing column with '/') stops the daemon with an error naming table, column, key and
        /// reason; with ignoreSQLErrors it goes to realm_adapter_dead_row and sync goes on.
        @Test(.timeLimit(.minutes(1)))
        func aRowNoRealmCanHoldStopsWithItsReasonOrIsSetAside() async throws {
            try await Self.withSyncingDaemon(Self.schema, path: "/{owner}/tasks") { dir, config, pg, first in
                var daemon = first
                _ = try await pg.sql(#"INSERT INTO "Task" VALUES (1, 'ann', '{a,NULL}')"#)
                #expect(await daemon.process.wait() == 1)
                var log = try String(contentsOfFile: daemon.log, encoding: .utf8)
                #expect(
                    log.contains("Table Task, column tags, row with key 1") && log.contains("NULL")
                        && log.contains("ignoreSQLErrors"),
                    "\(log.suffix(1500))")

                daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                _ = await daemon.process.wait()
                log = try String(contentsOfFile: daemon.log, encoding: .utf8)
                #expect(
                    log.contains("Table Task, column tags, row with key 1"),
                    "the same row stops it again: \(log.suffix(1500))")

                try DaemonProcess.edit(config, replacing: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
                daemon = try DaemonProcess(config: config, log: dir + "/daemon-3.log")
                try await daemon.waitUntilSyncing()
                _ = try await pg.sql(
                    #"INSERT INTO "Task" VALUES (2, 'a/b', '{x}'); INSERT INTO "Task" VALUES (3, 'bo', '{y}')"#)
                let store = try RealmStore(directory: dir + "/store")
                try await eventually("task 3 in bo's Realm") {
                    try store.contains("/bo/tasks") && store.object(of: "Task", identity: 3, in: "/bo/tasks") != nil
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                let dead = try await pg.sql(
                    "SELECT table_name, error, row_data::text FROM realm_adapter_dead_row ORDER BY id")
                #expect(dead.count == 2, "\(dead)")
                #expect(dead.first?[0] == "Task" && dead.first?[1]?.contains("column tags") == true)
                #expect(dead.last?[1]?.contains("owner") == true && dead.last?[1]?.contains("'/'") == true, "\(dead)")
                #expect(try store.contains("/ann/tasks") == false)
                // `status` counts them and lists them, newest first, with their reasons.
                let status = try await ChildProcess.run(
                    ChildProcess.built("realm-adapter"), ["status", "--config", config])
                let listed = status.stdout.split(separator: "\n").filter { $0.hasPrefix("  dead row: table Task at ") }
                #expect(status.status == 2 && status.stdout.contains("warning: 2 database row change(s)"), "\(status)")
                #expect(
                    listed.count == 2 && listed[0].contains("'/'") && listed[1].contains("column tags")
                        && listed.allSatisfy { $0.contains(" UTC: ") }, "\(status.stdout)")
            }
        }

        /// A row that stopped the daemon, fixed in the database and reloaded, is no longer named by
        /// `status` (a probe found it still `blocked:`, exit 3, until the next change arrived).
        @Test(.timeLimit(.minutes(1)))
        func aLoadPastABlockingRowClearsIt() async throws {
            try await Self.withSyncingDaemon(Self.schema) { dir, config, pg, first in
                _ = try await pg.sql(#"INSERT INTO "Task" VALUES (1, 'ann', '{a,NULL}')"#)
                #expect(await first.process.wait() == 1)
                _ = try await pg.sql(#"DELETE FROM "Task" WHERE id = 1"#)
                let cli = ChildProcess.built("realm-adapter")
                let load = try await ChildProcess.run(cli, ["load", "--config", config])
                #expect(load.status == 0, "\(load.stderr)")
                let status = try await ChildProcess.run(cli, ["status", "--config", config])
                #expect(status.status != 3 && !status.stdout.contains("blocked:"), "\(status.stdout)")
            }
        }

        /// A load that stopped part-way, then an app's write to a Realm: the load runs again (the
        /// Realms are partial, and `run` refuses until it has), and the app's write still reaches
        /// the database, both sides ending equal (a probe found `load` refusing for the unsent write
        /// and `run` for the unfinished load, with no way out but dropping the write).
        @Test(.timeLimit(.minutes(1)))
        func anAppWriteAfterAnInterruptedLoadDoesNotStopTheNextLoad() async throws {
            try await Self.withSyncingDaemon(Self.schema) { dir, config, pg, first in
                #expect(await first.terminate() == 0, Comment(rawValue: crashReport(first.log)))
                _ = try await pg.sql(
                    #"INSERT INTO "Task" SELECT i, 'ann', '{a}' FROM generate_series(1, 300) i"#)
                try DaemonProcess.edit(
                    config, replacing: #""schema":"#, with: #""loader": {"batchSize": 100}, "schema":"#)
                let cli = ChildProcess.built("realm-adapter")
                var environment = ProcessInfo.processInfo.environment
                environment[Failpoint.environmentVariable] = "load.after-batch=error"
                let stopped = try await ChildProcess.run(cli, ["load", "--config", config], environment: environment)
                #expect(stopped.status != 0, "\(stopped.stderr)")
                let store = try RealmStore(directory: dir + "/store")
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.create("Task", ["id": 1_000, "owner": "app", "tags": ["z"]])
                }
                let again = try await ChildProcess.run(cli, ["load", "--config", config])
                #expect(again.status == 0, "\(again.stderr)")
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await daemon.waitUntilSyncing()
                try await eventually("the app's task in the database") {
                    try await pg.sql(#"SELECT owner FROM "Task" WHERE id = 1000"#) == [["app"]]
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                #expect(try store.count(of: "Task", in: "/SQLDemo") == 301)
            }
        }

        /// One daemon per adapter and store: a second with its own replication slot (so the slot's
        /// lock does not stop it) is refused, naming the adapter and the store (a probe found two
        /// such daemons both sending each Realm change to the database, its triggers firing twice).
        @Test(.timeLimit(.minutes(1)))
        func aSecondDaemonOfTheAdapterOnTheStoreIsRefused() async throws {
            try await Self.withSyncingDaemon(Self.schema) { dir, config, pg, first in
                let text = try String(contentsOfFile: config, encoding: .utf8)
                let other = dir + "/other.json"
                try text.replacingOccurrences(of: #""slotName": ""#, with: #""slotName": "other_"#)
                    .write(toFile: other, atomically: true, encoding: .utf8)
                let second = try DaemonProcess(config: other, log: dir + "/daemon-2.log")
                #expect(await second.process.wait() != 0)
                let log = try String(contentsOfFile: second.log, encoding: .utf8)
                #expect(
                    log.contains("Another realm-adapter daemon is running adapter 'pg' on the store"),
                    "\(log.suffix(1500))")
                // Nor does a load start beside it: a probe's load ran while the daemon was reconnecting
                // (its slot idle), and both wrote to the Realms.
                let load = try await ChildProcess.run(ChildProcess.built("realm-adapter"), ["load", "--config", other])
                #expect(
                    load.status == 1 && load.stderr.contains("stop `realm-adapter run` before loading"),
                    "\(load.stderr)")
                #expect(await first.terminate() == 0, Comment(rawValue: crashReport(first.log)))
                // Once the first has stopped, the store is free.
                let third = try DaemonProcess(config: config, log: dir + "/daemon-3.log")
                try await third.waitUntilSyncing()
                #expect(await third.terminate() == 0, Comment(rawValue: crashReport(third.log)))
                _ = try await pg.sql(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                        + "WHERE slot_name LIKE 'other_%' AND NOT active")
            }
        }

        /// Database → Realm: values the connector cannot read into a Realm (a numeric NaN or past 38
        /// digits, a timestamptz infinity, a date outside the years a Realm holds) make bad rows like
        /// any other: named by table, column and key, they stop the daemon (`status` exit 3), or with
        /// ignoreSQLErrors they are set aside while sync goes on (a probe found the daemon stopping
        /// on them without naming the row, even with ignoreSQLErrors, on every restart).
        @Test(.timeLimit(.minutes(1)))
        func valuesTheConnectorCannotReadAreBadRows() async throws {
            let schema = """
                [{"name": "Reading", "primaryKey": "id",
                  "properties": {"id": "int", "amount": "decimal?", "at": "date?"}}]
                """
            try await Self.withSyncingDaemon(schema) { dir, config, pg, first in
                _ = try await pg.sql(#"INSERT INTO "Reading" (id, amount) VALUES (1, 'NaN')"#)
                #expect(await first.process.wait() == 1)
                let log = try String(contentsOfFile: first.log, encoding: .utf8)
                #expect(log.contains("Table Reading, column amount, row with key 1"), "\(log.suffix(1500))")
                let status = try await ChildProcess.run(
                    ChildProcess.built("realm-adapter"), ["status", "--config", config])
                #expect(
                    status.status == 3 && status.stdout.contains("Table Reading, column amount, row with key 1"),
                    "\(status.stdout)")

                try DaemonProcess.edit(config, replacing: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await daemon.waitUntilSyncing()
                _ = try await pg.sql(
                    """
                    INSERT INTO "Reading" (id, amount) VALUES (2, 1234567890123456789012345678901234567890);
                    INSERT INTO "Reading" (id, at) VALUES (3, 'infinity');
                    INSERT INTO "Reading" (id, at) VALUES (4, '0001-01-01');
                    INSERT INTO "Reading" (id, amount, at) VALUES (5, 1.5, '2020-01-01')
                    """)
                let store = try RealmStore(directory: dir + "/store")
                try await eventually("reading 5 in the Realm") {
                    try store.contains("/SQLDemo") && store.object(of: "Reading", identity: 5, in: "/SQLDemo") != nil
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                let dead = try await pg.sql("SELECT error FROM realm_adapter_dead_row ORDER BY id")
                #expect(dead.count == 4, "\(dead)")
                for (row, column) in zip(dead, ["amount", "amount", "at", "at"]) {
                    #expect(row[0]?.contains("Table Reading, column \(column)") == true, "\(dead)")
                }
                for id in 1...4 {
                    #expect(try store.object(of: "Reading", identity: .int(Int64(id)), in: "/SQLDemo") == nil)
                }
            }
        }

        /// Database → Realm: a row the Realm refuses (here a link to an object in another user's
        /// Realm) is a bad row like one the mapping refuses: named by table and key, it stops the
        /// daemon (`status` exit 3), or with ignoreSQLErrors it is set aside and the rest applies.
        /// (A probe found such a refusal stopping the daemon for good, with `status` silent.)
        @Test(.timeLimit(.minutes(1)))
        func aRowTheRealmRefusesIsABadRow() async throws {
            let schema = """
                [{"name": "Task", "primaryKey": "id", "properties": {"id": "int", "owner": "string"}},
                 {"name": "Note", "primaryKey": "id", "properties": {"id": "int", "owner": "string", "task": "Task"}}]
                """
            try await Self.withSyncingDaemon(schema, path: "/{owner}/tasks") { dir, config, pg, first in
                _ = try await pg.sql(
                    #"INSERT INTO "Task" VALUES (1, 'ann'); INSERT INTO "Note" VALUES (1, 'bob', 1), (2, 'bob', NULL)"#)
                #expect(await first.process.wait() == 1)
                let log = try String(contentsOfFile: first.log, encoding: .utf8)
                #expect(log.contains("Table Note, row with key 1: the Realm refuses it"), "\(log.suffix(1500))")
                let cli = ChildProcess.built("realm-adapter")
                let status = try await ChildProcess.run(cli, ["status", "--config", config])
                #expect(
                    status.status == 3 && status.stdout.contains("Table Note, row with key 1"), "\(status.stdout)")

                try DaemonProcess.edit(config, replacing: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await daemon.waitUntilSyncing()
                _ = try await pg.sql(#"INSERT INTO "Note" VALUES (3, 'ann', 1)"#)
                let store = try RealmStore(directory: dir + "/store")
                try await eventually("note 3 in ann's Realm") {
                    try store.contains("/ann/tasks") && store.object(of: "Note", identity: 3, in: "/ann/tasks") != nil
                }
                #expect(try store.object(of: "Note", identity: 2, in: "/bob/tasks") != nil, "the rest applied")
                #expect(try store.object(of: "Note", identity: 1, in: "/bob/tasks") == nil)
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                let dead = try await pg.sql("SELECT table_name, error FROM realm_adapter_dead_row")
                #expect(
                    dead.count == 1 && dead[0][0] == "Note" && dead[0][1]?.contains("links to a Task") == true,
                    "\(dead)")
                let after = try await ChildProcess.run(cli, ["status", "--config", config])
                #expect(after.status == 2 && !after.stdout.contains("blocked:"), "\(after.stdout)")
            }
        }

        /// A numeric column may back a double property: its NaN and infinities are doubles, both
        /// ways (a probe found the daemon stopping for good on its own write of a NaN read back).
        @Test(.timeLimit(.minutes(1)))
        func aNumericColumnHoldsADoublesNaNAndInfinities() async throws {
            let schema = """
                [{"name": "Reading", "primaryKey": "id", "properties": {"id": "int", "amount": "double?"}}]
                """
            try await Self.withSyncingDaemon(schema) { dir, config, pg, first in
                #expect(await first.terminate() == 0)
                _ = try await pg.sql(#"ALTER TABLE "Reading" ALTER COLUMN amount TYPE numeric"#)
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await daemon.waitUntilSyncing()
                let store = try RealmStore(directory: dir + "/store")
                let type = ObjectSchema(
                    name: "Reading", primaryKey: "id",
                    properties: [
                        Property(name: "id", type: .scalar(.int)),
                        Property(name: "amount", type: .scalar(.double), isOptional: true),
                    ])
                try await store.apply(
                    [
                        .addType(type),
                        .insert(objectType: "Reading", identity: 1, values: ["id": 1, "amount": .double(.nan)]),
                        .insert(objectType: "Reading", identity: 2, values: ["id": 2, "amount": .double(-.infinity)]),
                    ], to: "/SQLDemo", origin: "app")
                try await eventually("both rows in the database") {
                    try await pg.sql(#"SELECT id, amount::text FROM "Reading" ORDER BY id"#)
                        == [["1", "NaN"], ["2", "-Infinity"]]
                }
                _ = try await pg.sql(#"INSERT INTO "Reading" VALUES (3, 'Infinity'), (4, 2.5)"#)
                try await eventually("the database's rows in the Realm") {
                    try store.object(of: "Reading", identity: 4, in: "/SQLDemo") != nil
                }
                #expect(
                    try store.object(of: "Reading", identity: 3, in: "/SQLDemo")?.values["amount"] == .double(.infinity)
                )
                let nan = try store.object(of: "Reading", identity: 1, in: "/SQLDemo")?.values["amount"]
                #expect(nan.map { if case .double(let d) = $0 { d.isNaN } else { false } } == true)
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            }
        }

        /// Database → Realm: a row no Realm can hold that stopped the daemon is named by `status`
        /// (exit 3, table, column and key, and what to do); once the daemon is past it (here with
        /// ignoreSQLErrors) `status` no longer names it (a probe found `status` silent, exit 0).
        @Test(.timeLimit(.minutes(1)))
        func aRowThatStoppedTheDaemonIsShownByStatus() async throws {
            try await Self.withSyncingDaemon(Self.schema) { dir, config, pg, first in
                var daemon = first
                _ = try await pg.sql(#"INSERT INTO "Task" VALUES (1, 'ann', '{a,NULL}')"#)
                #expect(await daemon.process.wait() == 1)

                let cli = ChildProcess.built("realm-adapter")
                let status = try await ChildProcess.run(cli, ["status", "--config", config])
                #expect(status.status == 3, "\(status.stdout)")
                #expect(
                    status.stdout.contains("blocked: a database change no Realm can hold")
                        && status.stdout.contains("Table Task, column tags, row with key 1")
                        && status.stdout.contains("ignoreSQLErrors"), "\(status.stdout)")

                try DaemonProcess.edit(config, replacing: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
                daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await daemon.waitUntilSyncing()
                _ = try await pg.sql(#"INSERT INTO "Task" VALUES (2, 'bo', '{y}')"#)
                let store = try RealmStore(directory: dir + "/store")
                try await eventually("task 2 in the Realm") {
                    try store.contains("/SQLDemo") && store.object(of: "Task", identity: 2, in: "/SQLDemo") != nil
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                let after = try await ChildProcess.run(cli, ["status", "--config", config])
                #expect(after.status == 2 && !after.stdout.contains("blocked:"), "\(after.stdout)")
            }
        }

        /// Realm → database: a change the database rejects inside a backlog (sent together, then one
        /// by one) stops the daemon after the ones before it landed; `status` names it and exits 3,
        /// and counts only what is still unsent (a probe found `status` silent, exiting 0, since the
        /// Realm's cursor had stayed at the start of the backlog).
        @Test(.timeLimit(.minutes(1)))
        func aRejectedChangeInABacklogIsShownByStatus() async throws {
            try await Self.withSyncingDaemon(GuaranteeWorkload.schema) { dir, config, pg, first in
                var daemon = first
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                _ = try await pg.sql(#"ALTER TABLE "Item" ADD CONSTRAINT not_45 CHECK (n <> 45)"#)
                let store = try RealmStore(directory: dir + "/store")
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.addType(GuaranteeWorkload.itemType)
                }
                var versions: [Int64] = []
                for i in 1...100 {
                    versions.append(
                        try store.write(to: "/SQLDemo", origin: "app") { tx in
                            _ = try tx.create("Item", ["id": .int(Int64(i)), "n": .int(Int64(i)), "origin": "realm"])
                        }.version)
                }
                daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                #expect(await daemon.process.wait() == 1)
                #expect(try await pg.sql(#"SELECT count(*), max(id) FROM "Item""#) == [["44", "44"]])

                let status = try await ChildProcess.run(
                    ChildProcess.built("realm-adapter"), ["status", "--config", config])
                #expect(status.status == 3, "\(status.stdout)")
                #expect(
                    status.stdout.contains("blocked: /SQLDemo version \(versions[44])")
                        && status.stdout.contains("not_45"), "\(status.stdout)")
                // Version 101, 56 unsent, the database recorded 45 (the 44 items and the type).
                let row = status.stdout.split(separator: "\n").first { $0.hasPrefix("/SQLDemo ") }
                #expect(row?.split(separator: " ").prefix(4) == ["/SQLDemo", "101", "56", "45"], "\(status.stdout)")
            }
        }

        /// Realm → database: an object whose creating transaction went to the dead-letter record has
        /// no row in the database. A later change of it goes there too, in order, and the Realm keeps
        /// the object (a probe found the later edit lost, and the object deleted from the Realm by the
        /// convergence rule: its update had found no row). Once the database has the row, changes
        /// go through again.
        @Test(.timeLimit(.minutes(1)))
        func aLaterChangeOfAnObjectTheDatabaseNeverGotIsKeptNotLost() async throws {
            try await Self.withSyncingDaemon(GuaranteeWorkload.schema) { dir, config, pg, first in
                #expect(await first.terminate() == 0)
                try DaemonProcess.edit(config, replacing: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
                _ = try await pg.sql(#"ALTER TABLE "Item" ADD CONSTRAINT no_bad CHECK (origin <> 'bad')"#)
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await daemon.waitUntilSyncing()
                let store = try RealmStore(directory: dir + "/store")
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.adopt(Schema([GuaranteeWorkload.itemType]))
                    try tx.create("Item", ["id": 7, "n": 0, "origin": "bad"])
                }
                try store.write(to: "/SQLDemo", origin: "app") { tx in try tx.update("Item", 7, ["n": 5]) }
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.create("Item", ["id": 8, "n": 0, "origin": "fine"])
                }
                try await eventually("item 8 in the database") {
                    try await pg.sql(#"SELECT id FROM "Item""#) == [["8"]]
                }
                try await Task.sleep(for: .milliseconds(300))  // the echo of item 8's transaction
                #expect(try store.object(of: "Item", identity: 7, in: "/SQLDemo")?.values["n"] == 5)
                let dead = try await pg.sql("SELECT version, error FROM realm_adapter_dead_letter ORDER BY version")
                #expect(dead.count == 2 && dead[1][1]?.contains("dead-letter") == true, "\(dead)")
                let status = try await ChildProcess.run(
                    ChildProcess.built("realm-adapter"), ["status", "--config", config])
                let listed = status.stdout.split(separator: "\n").filter {
                    $0.hasPrefix("  dead letter: /SQLDemo version ")
                }
                #expect(
                    listed.count == 2 && listed[0].contains("dead-letter") && listed[1].contains("no_bad"),
                    "\(status.stdout)")
                // The user puts the row in by hand: the object's changes go through again.
                _ = try await pg.sql(#"INSERT INTO "Item" VALUES (7, 5, 'fixed')"#)
                try store.write(to: "/SQLDemo", origin: "app") { tx in try tx.update("Item", 7, ["n": 6]) }
                try await eventually("item 7's edit in the database") {
                    try await pg.sql(#"SELECT n FROM "Item" WHERE id = 7"#) == [["6"]]
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            }
        }

        /// Realm → database: a change the database rejects (a delete that a foreign key of an
        /// unsynced table forbids) stops the daemon with it unsent; `status` shows it with the
        /// database's error and exits 3; `dead-letter` moves it aside (nothing lost) and sync goes on.
        @Test(.timeLimit(.minutes(1)))
        func aRejectedRealmChangeIsShownByStatusAndCanBeMovedAside() async throws {
            try await Self.withSyncingDaemon(GuaranteeWorkload.schema) { dir, config, pg, first in
                var daemon = first
                _ = try await pg.sql(
                    #"INSERT INTO "Item" VALUES (1, 0, 'db'); CREATE TABLE note (item bigint REFERENCES "Item" (id)); INSERT INTO note VALUES (1)"#
                )
                let store = try RealmStore(directory: dir + "/store")
                try await eventually("item 1 in the Realm") {
                    try store.contains("/SQLDemo") && store.object(of: "Item", identity: 1, in: "/SQLDemo") != nil
                }
                let version = try store.write(to: "/SQLDemo", origin: "app") { tx in try tx.delete("Item", 1) }.version
                #expect(await daemon.process.wait() == 1)

                let cli = ChildProcess.built("realm-adapter")
                let status = try await ChildProcess.run(cli, ["status", "--config", config])
                #expect(status.status == 3, "\(status.stdout)")
                #expect(
                    status.stdout.contains("blocked: /SQLDemo version \(version)")
                        && status.stdout.contains("violates foreign key constraint"),
                    "\(status.stdout)")
                #expect(status.stdout.contains("realm-adapter dead-letter /SQLDemo --version \(version)"))
                let load = try await ChildProcess.run(cli, ["load", "--config", config])
                #expect(load.status == 1 && load.stderr.contains("dead-letter"), "\(load.stderr)")

                let wrong = try await ChildProcess.run(
                    cli, ["dead-letter", "/SQLDemo", "--version", "\(version + 1)", "--config", config])
                #expect(wrong.status == 1, "\(wrong.stdout)")
                // A path with no Realm is said to be one (a probe was told "nothing is blocked").
                let nowhere = try await ChildProcess.run(cli, ["dead-letter", "/nope", "--config", config])
                #expect(
                    nowhere.status == 1 && nowhere.stderr.contains("There is no Realm at /nope"), "\(nowhere.stderr)")
                let moved = try await ChildProcess.run(
                    cli, ["dead-letter", "/SQLDemo", "--version", "\(version)", "--config", config])
                #expect(moved.status == 0, "\(moved.stderr)")
                let after = try await ChildProcess.run(cli, ["status", "--config", config])
                #expect(
                    after.status == 2 && !after.stdout.contains("blocked:")
                        && after.stdout.contains("dead-letter table"), "\(after.stdout)")

                daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
                try await daemon.waitUntilSyncing()
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.create("Item", ["id": 2, "n": 0, "origin": "realm"])
                }
                try await eventually("item 2 in the database") {
                    try await pg.sql(#"SELECT count(*) FROM "Item" WHERE id = 2"#) == [["1"]]
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                let dead = try await pg.sql(
                    "SELECT version::text, error, instructions::text FROM realm_adapter_dead_letter")
                #expect(
                    dead.count == 1 && dead.first?[0] == "\(version)" && dead.first?[1]?.contains("foreign key") == true
                        && dead.first?[2]?.contains("DELETE") == true, "\(dead)")
            }
        }
    }
}
