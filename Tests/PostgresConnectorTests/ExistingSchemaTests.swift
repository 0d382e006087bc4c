import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// Schemas an application made, not `createSchema`: following them must not break the
    /// application's own writes, and their shapes must sync both ways.
    @Suite struct ExistingSchemaTests {
        /// A fresh database with `tables` made first, and a daemon syncing it with `schema`.
        static func withDaemon(
            tables: String, schema: String, stopsByItself: Bool = false, name: String = #function,
            _ body: (_ store: RealmStore, PostgresConnection, DaemonProcess) async throws -> Void
        ) async throws {
            try await TestServer.withFreshDatabase(name) { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                _ = try await pg.sql(tables)
                let (dir, config) = try DaemonProcess.workspace(settings, schema: schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon.log")
                try await daemon.waitUntilSyncing()
                do { try await body(try RealmStore(directory: dir + "/store"), pg, daemon) } catch {
                    Issue.record(Comment(rawValue: crashReport(daemon.log)))
                    throw error
                }
                if !stopsByItself { #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log))) }
            }
        }

        /// A mapped table or column renamed while the daemon runs: the stream carries its changes
        /// under the new name, which the mapping does not know, and they were dropped without a word
        /// (two probes). A table is known by its OID; a column's values are read from the table as it
        /// is now, and while the mapped name is gone there the daemon stops, the change unconfirmed:
        /// once the names agree again, it is applied.
        @Test(.timeLimit(.minutes(1)))
        func aMappedTableOrColumnRenamedWhileTheDaemonRunsLosesNothing() async throws {
            let tables = "CREATE TABLE city (id int PRIMARY KEY, name text); INSERT INTO city VALUES (1, 'NYC')"
            let schema = """
                [{"name": "city", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}}]
                """
            try await Self.withDaemon(tables: tables, schema: schema, stopsByItself: true) { store, pg, daemon in
                _ = try await pg.sql("ALTER TABLE city RENAME TO town; INSERT INTO town VALUES (2, 'LA')")
                try await eventually("the renamed table's row in the Realm") {
                    try store.contains("/SQLDemo")
                        && store.object(of: "city", identity: 2, in: "/SQLDemo")?.values["name"] == "LA"
                }
                _ = try await pg.sql("ALTER TABLE town RENAME TO city")
                _ = try await pg.sql("ALTER TABLE city RENAME COLUMN name TO cname; UPDATE city SET cname = 'NY2'")
                #expect(await daemon.process.wait() == 1)
                let log = try String(contentsOfFile: daemon.log, encoding: .utf8)
                #expect(log.contains("renamed or dropped") && log.contains("name"), "\(log.suffix(1500))")
                #expect(try store.object(of: "city", identity: 1, in: "/SQLDemo")?.values["name"] != "NY2")
                _ = try await pg.sql("ALTER TABLE city RENAME COLUMN cname TO name")
                let again = try DaemonProcess(config: daemon.config, log: daemon.log + ".2")
                try await again.waitUntilSyncing()
                try await eventually("the change made under the other name, in the Realm") {
                    try store.object(of: "city", identity: 1, in: "/SQLDemo")?.values["name"] == "NY2"
                        && store.object(of: "city", identity: 2, in: "/SQLDemo")?.values["name"] == "NY2"
                }
                #expect(await again.terminate() == 0, Comment(rawValue: crashReport(again.log)))
            }
        }

        /// A mapped table with inheritance children: publishing it published the children too
        /// (`FOR TABLE` takes descendants), whose own updates then failed for want of a replica
        /// identity, and the load read their rows while the stream skipped their changes (a probe).
        /// The type is the table's own rows, both ways: the publication and the load take `ONLY` it.
        @Test(.timeLimit(.minutes(1)))
        func aMappedTablesInheritanceChildrenAreLeftAlone() async throws {
            let tables = """
                CREATE TABLE animal (id int PRIMARY KEY, name text);
                CREATE TABLE dog (breed text) INHERITS (animal);
                INSERT INTO animal VALUES (1, 'generic'); INSERT INTO dog VALUES (2, 'rex', 'lab')
                """
            let schema = """
                [{"name": "animal", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}}]
                """
            try await Self.withDaemon(tables: tables, schema: schema) { store, pg, _ in
                _ = try await pg.sql("UPDATE dog SET name = 'rex2' WHERE id = 2")
                _ = try await pg.sql("INSERT INTO animal VALUES (3, 'cat')")
                try await eventually("the parent's row in the Realm") {
                    try store.contains("/SQLDemo") && store.object(of: "animal", identity: 3, in: "/SQLDemo") != nil
                }
                #expect(try store.object(of: "animal", identity: 2, in: "/SQLDemo") == nil)
                let published = try await pg.sql("SELECT tablename FROM pg_publication_tables ORDER BY 1")
                #expect(!published.contains(["dog"]), "\(published)")
            }
        }

        /// A key `GENERATED ALWAYS AS IDENTITY` (the modern default) and a generated column: a Realm
        /// object's key is its own, so inserts say `OVERRIDING SYSTEM VALUE`, and a generated column
        /// is never written (its value comes back). A probe found both refused by the database.
        @Test(.timeLimit(.minutes(1)))
        func identityKeysAndGeneratedColumnsTakeTheRealmsObjects() async throws {
            let tables = """
                CREATE TABLE gen_t (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text,
                                    nlen int GENERATED ALWAYS AS (length(name)) STORED)
                """
            let schema = """
                [{"name": "gen_t", "primaryKey": "id", "properties": {"id": "int", "name": "string?", "nlen": "int?"}}]
                """
            try await Self.withDaemon(tables: tables, schema: schema) { store, pg, _ in
                let type = try #require(try Schema(json: JSONValue(parsing: schema))[type: "gen_t"])
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.addType(type)
                    try tx.create("gen_t", ["id": 3, "name": "abc", "nlen": 99])
                }
                try await eventually("the Realm's object in the database") {
                    try await pg.sql("SELECT id, name, nlen FROM gen_t") == [["3", "abc", "3"]]
                }
                try await eventually("the generated value back in the Realm") {
                    try store.object(of: "gen_t", identity: 3, in: "/SQLDemo")?.values["nlen"] == 3
                }
            }
        }

        /// A foreign key without `ON DELETE` (the default, `NO ACTION`): deleting its target in a
        /// Realm nulls the links to it there, and the database gets the same, before the row's
        /// `DELETE` (a probe found the `DELETE` refused by the key, and the Realm transaction, with
        /// everything else in it, left unsent).
        @Test(.timeLimit(.minutes(1)))
        func deletingALinkedObjectNullsTheLinksInTheDatabaseToo() async throws {
            let tables = """
                CREATE TABLE team (id int PRIMARY KEY, name text);
                CREATE TABLE member (id int PRIMARY KEY, team int REFERENCES team (id), name text);
                INSERT INTO team VALUES (1, 'red'), (2, 'blue');
                INSERT INTO member VALUES (10, 1, 'ann'), (11, 1, 'bob'), (12, 2, 'cy')
                """
            let schema = """
                [{"name": "team", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}},
                 {"name": "member", "primaryKey": "id", "properties": {"id": "int", "team": "team", "name": "string?"}}]
                """
            try await Self.withDaemon(tables: tables, schema: schema) { store, pg, _ in
                // The rows reach the Realm (no load: updated in the database while the daemon runs).
                _ = try await pg.sql("UPDATE team SET name = upper(name)")
                _ = try await pg.sql("UPDATE member SET name = name || '!'")
                try await eventually("the rows in the Realm") {
                    try store.contains("/SQLDemo") && store.count(of: "member", in: "/SQLDemo") == 3
                }
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.delete("team", 1)
                    try tx.update("team", 2, ["name": "BLUE2"])
                }
                #expect(try store.object(of: "member", identity: 10, in: "/SQLDemo")?.values["team"] == .null)
                try await eventually("team 1 gone from the database, team 2 renamed") {
                    try await pg.sql("SELECT id, name FROM team ORDER BY id") == [["2", "BLUE2"]]
                }
                #expect(
                    try await pg.sql("SELECT id, team FROM member ORDER BY id")
                        == [["10", nil], ["11", nil], ["12", "2"]])
            }
        }

        /// A table keyed by a unique index, with no primary key: publishing it without a replica
        /// identity made the application's own UPDATE and DELETE fail ("cannot update table …
        /// because it does not have a replica identity and publishes updates"). The daemon gives
        /// it one (the unique index).
        @Test(.timeLimit(.minutes(1)))
        func aTableKeyedByAUniqueIndexKeepsTakingTheApplicationsWrites() async throws {
            let tables = """
                CREATE TABLE person (email text NOT NULL, nick text);
                CREATE UNIQUE INDEX person_email ON person (email);
                INSERT INTO person VALUES ('a@x', 'ann')
                """
            let schema = """
                [{"name": "person", "primaryKey": "email", "properties": {"email": "string", "nick": "string?"}}]
                """
            try await Self.withDaemon(tables: tables, schema: schema) { store, pg, _ in
                _ = try await pg.sql("INSERT INTO person VALUES ('b@x', 'bob')")
                _ = try await pg.sql("UPDATE person SET nick = 'annie' WHERE email = 'a@x'")
                _ = try await pg.sql("DELETE FROM person WHERE email = 'b@x'")
                _ = try await pg.sql("INSERT INTO person VALUES ('c@x', 'cy')")
                try await eventually("the last insert in the Realm") {
                    try store.contains("/SQLDemo") && store.object(of: "person", identity: "c@x", in: "/SQLDemo") != nil
                }
                #expect(try store.object(of: "person", identity: "a@x", in: "/SQLDemo")?.values["nick"] == "annie")
                #expect(try store.object(of: "person", identity: "b@x", in: "/SQLDemo") == nil)
                let identity = try await pg.sql("SELECT relreplident FROM pg_class WHERE relname = 'person'")
                #expect(identity == [["i"]], "the unique index, not the whole row")
            }
        }
    }
}
