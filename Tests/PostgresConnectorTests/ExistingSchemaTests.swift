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
            tables: String, schema: String, name: String = #function,
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
                try await body(try RealmStore(directory: dir + "/store"), pg, daemon)
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
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
