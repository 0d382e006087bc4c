import Foundation
import Logging
import PostgresConnector
import RealmAdapter
import Testing
import TestSupport

/// Loads through the same code as `realm-adapter load`, in this process.
enum LoadHarness {
    static func load(_ config: Configuration, only: [String]? = nil) async throws -> LoadSummary {
        var logger = Logger(label: "test.load")
        logger.logLevel = ProcessInfo.processInfo.environment["REALM_ADAPTER_TEST_DEBUG"] != nil ? .debug : .warning
        let mapping = try Mapping(config)
        let store = try RealmStore(directory: config.realm.store)
        let adapter = try Adapter(store: store, name: config.realm.adapterName, pathRegex: config.realm.effectivePathRegex)
        let connector = PostgresConnector(configuration: config.database!, customTypes: config.mapping.customTypes, logger: logger)
        let loader = Loader(store: store, mapping: mapping, adapter: adapter, source: connector.sourceName, configuration: config.loader, logger: logger)
        return try await loader.load(from: connector, plan: try LoadPlan(mapping, only: only), partial: only != nil)
    }

    /// A fresh database and store directory; `body` gets the settings and the store directory.
    static func withDatabase(_ name: String = #function, _ body: (PostgresSettings, PostgresConnection, String) async throws -> Void) async throws {
        try await TestServer.withFreshDatabase(name) { settings in
            let dir = NSTemporaryDirectory() + "realm-adapter-load-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            try await body(settings, pg, dir)
        }
    }
}

extension PostgresConnection {
    func sql(_ text: String, _ params: [String?] = []) async throws -> [[String?]] {
        try await session { s in try s.query(text, params).rows }
    }
}

extension PostgresIntegration {
@Suite struct LoaderTests {
    static let schema = """
        [{"name": "Person", "primaryKey": "id", "properties": {
            "id": "int", "name": "string?", "boss": "Person", "team": "Team", "tags": "string[]", "mood": "string?", "salary": "string?"}},
         {"name": "Team", "primaryKey": "code", "properties": {"code": "string", "members": "Person[]"}},
         {"name": "Membership", "primaryKey": "id", "properties": {"id": "string", "person": "Person", "team": "Team", "since": "date?"}}]
        """
    static let mapping = """
        , "mapping": {
            "tables": {"people": "Person", "teams": "Team"},
            "columns": {"Person": {"full_name": "name"}},
            "convert": {"Person": {"salary": "string"}},
            "customTypes": {"mood_kind": "string"},
            "compoundPrimaryKeys": {"Membership": [
                {"property": "person", "dbColumn": "person_id", "type": "int"}, {"property": "team", "dbColumn": "team_code", "type": "string"}]}}
        """
    static let ddl = """
        CREATE TYPE mood_kind AS ENUM ('calm', 'busy');
        CREATE TABLE teams (code text PRIMARY KEY);
        CREATE TABLE people (id bigint PRIMARY KEY, full_name text, boss bigint REFERENCES people (id), team text REFERENCES teams (code),
                             tags text[], mood mood_kind, salary numeric(10,2));
        CREATE TABLE "teams_members" (oid text NOT NULL REFERENCES teams (code), idx integer NOT NULL, target bigint NOT NULL REFERENCES people (id));
        CREATE TABLE "Membership" (person_id bigint REFERENCES people (id), team_code text REFERENCES teams (code), since date,
                                   PRIMARY KEY (person_id, team_code));
        """

    /// Renames, converters, custom types, foreign keys (also to a type later in the schema and
    /// to itself, set in a second pass), arrays, link tables and join tables, as the daemon maps them.
    @Test(.timeLimit(.minutes(1)))
    func loadsEveryMappingRule() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            _ = try await pg.sql(Self.ddl)
            _ = try await pg.sql("""
                INSERT INTO teams VALUES ('red'), ('blue');
                INSERT INTO people VALUES (1, 'Ann', 3, 'red', '{a,"b c"}', 'calm', 1234.50), (2, NULL, 1, NULL, NULL, NULL, NULL),
                                          (3, 'Cy', NULL, 'blue', '{}', 'busy', 0);
                INSERT INTO teams_members VALUES ('red', 0, 2), ('red', 1, 1), ('blue', 0, 3);
                INSERT INTO "Membership" VALUES (1, 'red', '2024-05-06'), (3, 'red', NULL);
                """)
            let config = try SyncHarness.config(settings, store: dir, extra: Self.mapping, schema: Self.schema)
            let summary = try await LoadHarness.load(config)
            let store = try RealmStore(directory: dir)
            func object(_ type: String, _ id: Value) throws -> RealmObject? { try store.object(of: type, identity: id, in: "/SQLDemo") }

            let ann = try #require(try object("Person", 1))
            #expect(ann.values["name"] == "Ann")
            #expect(ann.values["boss"] == 3)  // a link to a row loaded after it
            #expect(ann.values["team"] == "red")
            #expect(ann.values["tags"] == ["a", "b c"])
            #expect(ann.values["mood"] == "calm")
            #expect(ann.values["salary"] == "1234.5")  // numeric → Decimal → text, as the daemon converts it
            let two = try #require(try object("Person", 2))
            #expect(two.values["name"] == .null && two.values["boss"] == 1 && two.values["tags"] == .list([]))
            #expect(try object("Person", 3)?.values["boss"] == .null)
            #expect(try store.list("members", of: "Team", identity: "red", in: "/SQLDemo") == [2, 1])
            #expect(try store.list("members", of: "Team", identity: "blue", in: "/SQLDemo") == [3])
            let m = try #require(try object("Membership", "1-red"))
            #expect(m.values["person"] == 1 && m.values["team"] == "red" && m.values["since"] == .date(Timestamp(iso8601: "2024-05-06T00:00:00Z")!))
            #expect(try object("Membership", "3-red") != nil)
            #expect(summary.tables.map(\.table) == ["teams", "people", "Membership", "people", "teams_members"])
            #expect(summary.tables.map(\.rows) == [2, 3, 2, 3, 3])
            #expect(summary.handOffPosition != nil)

            // The loaded transactions carry the adapter's origin: the daemon never sends them back.
            #expect(try store.history(of: "/SQLDemo").allSatisfy { $0.origin == "adapter:pg" })
            #expect(try store.metadata(Loader.stateKey(source: "postgres:\(settings.database!)"))?.hasPrefix("done") == true)
        }
    }

    /// A foreign key to a missing row stops the load naming table, column and key; with
    /// `danglingForeignKeys: nullify` the row loads with a null link and is counted.
    @Test(.timeLimit(.minutes(1)))
    func danglingForeignKeysAreAnErrorOrNull() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            _ = try await pg.sql("""
                CREATE TABLE "Driver" (id bigint PRIMARY KEY, name text, hired timestamptz);
                CREATE TABLE "Bus" (vehicle bigint PRIMARY KEY, fleet_id text, seats bigint, driver bigint, price numeric, tags text[], photo bytea, note text);
                INSERT INTO "Driver" (id) VALUES (1);
                INSERT INTO "Bus" (vehicle, seats, driver) VALUES (7, 40, 1), (8, 40, 99);
                """)
            let strict = try SyncHarness.config(settings, store: dir, createSchema: false)
            await #expect {
                _ = try await LoadHarness.load(strict)
            } throws: { e in
                let message = (e as? RealmAdapterError)?.message ?? ""
                return message.contains("Table Bus, column driver, row with key 8") && message.contains("danglingForeignKeys")
            }
            // The interrupted load is recorded: the daemon would refuse to start.
            #expect(throws: RealmAdapterError.self) { try Loader.requireFinishedLoad(try RealmStore(directory: dir), source: "postgres:\(settings.database!)") }

            let lenient = try SyncHarness.config(settings, store: dir, extra: #", "loader": {"danglingForeignKeys": "nullify"}"#, createSchema: false)
            let summary = try await LoadHarness.load(lenient)
            #expect(summary.tables.first { $0.table == "Bus" }?.danglingLinks == 1)
            let store = try RealmStore(directory: dir)
            #expect(try store.object(of: "Bus", identity: 8, in: "/SQLDemo")?.values["driver"] == .null)
            #expect(try store.object(of: "Bus", identity: 7, in: "/SQLDemo")?.values["driver"] == 1)
            try Loader.requireFinishedLoad(store, source: "postgres:\(settings.database!)")
        }
    }

    /// Per-user paths: one table fans out to a Realm per user.
    @Test(.timeLimit(.minutes(1)))
    func routedTableFansOutToManyRealms() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            _ = try await pg.sql("""
                CREATE TABLE "Task" (id bigint PRIMARY KEY, title text, owner text NOT NULL);
                INSERT INTO "Task" SELECT i, 'task ' || i, 'user' || (i % 3) FROM generate_series(1, 30) i;
                """)
            let schema = #"[{"name": "Task", "primaryKey": "id", "properties": {"id": "int", "title": "string?"}}]"#
            let config = try SyncHarness.config(settings, store: dir, schema: schema, path: "/{owner}/tasks")
            let summary = try await LoadHarness.load(config)
            #expect(summary.realms == ["/user0/tasks", "/user1/tasks", "/user2/tasks"])
            let store = try RealmStore(directory: dir)
            for u in 0..<3 {
                let ids = try store.objects(of: "Task", in: "/user\(u)/tasks").map(\.identity)
                #expect(ids == (1...30).filter { $0 % 3 == u }.map { .int(Int64($0)) })
            }
            // A user whose rows all moved away loses them on the next load.
            _ = try await pg.sql(#"UPDATE "Task" SET owner = 'user1' WHERE owner = 'user2'"#)
            _ = try await LoadHarness.load(config)
            #expect(try store.count(of: "Task", in: "/user2/tasks") == 0)
            #expect(try store.count(of: "Task", in: "/user1/tasks") == 20)
        }
    }
}
}
