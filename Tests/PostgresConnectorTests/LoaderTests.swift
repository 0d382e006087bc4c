import Foundation
import Logging
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

/// Loads through the same code as `realm-adapter load`, in this process.
enum LoadHarness {
    static func load(
        _ config: Configuration, only: [String]? = nil, progress: @escaping @Sendable (LoadProgress) -> Void = { _ in }
    ) async throws -> LoadSummary {
        var logger = Logger(label: "test.load")
        logger.logLevel = ProcessInfo.processInfo.environment["REALM_ADAPTER_TEST_DEBUG"] != nil ? .debug : .warning
        let mapping = try Mapping(config)
        let store = try RealmStore(directory: config.realm.store)
        let adapter = try Adapter(
            store: store, name: config.realm.adapterName, pathRegex: config.realm.effectivePathRegex)
        let connector = PostgresConnector(
            configuration: config.database!, customTypes: config.mapping.customTypes, logger: logger)
        let loader = Loader(
            store: store, mapping: mapping, adapter: adapter, source: connector.sourceName,
            configuration: config.loader, logger: logger)
        return try await loader.load(
            from: connector, plan: try LoadPlan(mapping, only: only), partial: only != nil, progress: progress)
    }

    /// A fresh database and store directory; `body` gets the settings and the store directory.
    static func withDatabase(
        _ name: String = #function, _ body: (PostgresSettings, PostgresConnection, String) async throws -> Void
    ) async throws {
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
                _ = try await pg.sql(
                    """
                    INSERT INTO teams VALUES ('red'), ('blue');
                    INSERT INTO people VALUES (1, 'Ann', 3, 'red', '{a,"b c"}', 'calm', 1234.50), (2, NULL, 1, NULL, NULL, NULL, NULL),
                                              (3, 'Cy', NULL, 'blue', '{}', 'busy', 0);
                    INSERT INTO teams_members VALUES ('red', 0, 2), ('red', 1, 1), ('blue', 0, 3);
                    INSERT INTO "Membership" VALUES (1, 'red', '2024-05-06'), (3, 'red', NULL);
                    """)
                let config = try SyncHarness.config(settings, store: dir, extra: Self.mapping, schema: Self.schema)
                let summary = try await LoadHarness.load(config)
                let store = try RealmStore(directory: dir)
                func object(_ type: String, _ id: Value) throws -> RealmObject? {
                    try store.object(of: type, identity: id, in: "/SQLDemo")
                }

                let ann = try #require(try object("Person", 1))
                #expect(ann.values["name"] == "Ann")
                #expect(ann.values["boss"] == 3)  // a link to a row loaded after it
                #expect(ann.values["team"] == "red")
                #expect(ann.values["tags"] == ["a", "b c"])
                #expect(ann.values["mood"] == "calm")
                // numeric → decimal (its scale kept) → text, as the daemon converts it
                #expect(ann.values["salary"] == "1234.50")
                let two = try #require(try object("Person", 2))
                #expect(two.values["name"] == .null && two.values["boss"] == 1 && two.values["tags"] == .list([]))
                #expect(try object("Person", 3)?.values["boss"] == .null)
                #expect(try store.list("members", of: "Team", identity: "red", in: "/SQLDemo") == [2, 1])
                #expect(try store.list("members", of: "Team", identity: "blue", in: "/SQLDemo") == [3])
                let m = try #require(try object("Membership", "1-red"))
                #expect(
                    m.values["person"] == 1 && m.values["team"] == "red"
                        && m.values["since"] == .date(Timestamp(iso8601: "2024-05-06T00:00:00Z")!))
                #expect(try object("Membership", "3-red") != nil)
                #expect(summary.tables.map(\.table) == ["teams", "people", "Membership", "people", "teams_members"])
                #expect(summary.tables.map(\.rows) == [2, 3, 2, 3, 3])
                #expect(summary.handOffPosition != nil)

                // The loaded transactions carry the adapter's origin: the daemon never sends them back.
                #expect(try store.history(of: "/SQLDemo").allSatisfy { $0.origin == "adapter:pg" })
                #expect(
                    try store.metadata(Loader.stateKey(source: "postgres:\(settings.database!)"))?.hasPrefix("done")
                        == true)
            }
        }

        /// A foreign key to a missing row stops the load naming table, column and key; with
        /// `danglingForeignKeys: nullify` the row loads with a null link and is counted.
        @Test(.timeLimit(.minutes(1)))
        func danglingForeignKeysAreAnErrorOrNull() async throws {
            try await LoadHarness.withDatabase { settings, pg, dir in
                _ = try await pg.sql(
                    """
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
                    return message.contains("Table Bus, column driver, row with key 8")
                        && message.contains("danglingForeignKeys")
                }
                // The interrupted load is recorded: the daemon would refuse to start.
                #expect(throws: RealmAdapterError.self) {
                    try Loader.requireFinishedLoad(
                        try RealmStore(directory: dir), source: "postgres:\(settings.database!)")
                }

                let lenient = try SyncHarness.config(
                    settings, store: dir, extra: #", "loader": {"danglingForeignKeys": "nullify"}"#, createSchema: false
                )
                let summary = try await LoadHarness.load(lenient)
                #expect(summary.tables.first { $0.table == "Bus" }?.danglingLinks == 1)
                let store = try RealmStore(directory: dir)
                #expect(try store.object(of: "Bus", identity: 8, in: "/SQLDemo")?.values["driver"] == .null)
                #expect(try store.object(of: "Bus", identity: 7, in: "/SQLDemo")?.values["driver"] == 1)
                try Loader.requireFinishedLoad(store, source: "postgres:\(settings.database!)")
            }
        }

        /// A table of scalars and links takes the loader's prepared path: its links are checked
        /// before a batch is stored, and a batch with a dangling one is taken row by row (an error
        /// naming the row, or with `nullify` a null link, in the Realm and in its history alike).
        @Test(.timeLimit(.minutes(1)))
        func preparedRowsWithDanglingLinksAreAnErrorOrNull() async throws {
            try await LoadHarness.withDatabase { settings, pg, dir in
                _ = try await pg.sql(
                    """
                    CREATE TABLE "Driver" (id bigint PRIMARY KEY);
                    CREATE TABLE "Ride" (id bigint PRIMARY KEY, driver bigint, backup bigint, km bigint NOT NULL);
                    INSERT INTO "Driver" SELECT i FROM generate_series(1, 5) i;
                    INSERT INTO "Ride" SELECT i, 1 + i % 5, CASE WHEN i % 2 = 0 THEN NULL ELSE 2 END, i FROM generate_series(1, 300) i;
                    UPDATE "Ride" SET backup = 99 WHERE id = 150;
                    """)
                let schema = """
                    [{"name": "Driver", "primaryKey": "id", "properties": {"id": "int"}},
                     {"name": "Ride", "primaryKey": "id", "properties": {"id": "int", "driver": "Driver", "backup": "Driver", "km": "int"}}]
                    """
                let strict = try SyncHarness.config(settings, store: dir, schema: schema, createSchema: false)
                await #expect {
                    _ = try await LoadHarness.load(strict)
                } throws: { e in
                    let message = (e as? RealmAdapterError)?.message ?? ""
                    return message.contains("Table Ride, column backup, row with key 150")
                }
                let lenient = try SyncHarness.config(
                    settings, store: dir, extra: #", "loader": {"danglingForeignKeys": "nullify", "batchSize": 100}"#,
                    schema: schema, createSchema: false)
                let summary = try await LoadHarness.load(lenient)
                #expect(summary.tables.first { $0.table == "Ride" }?.danglingLinks == 1)
                let store = try RealmStore(directory: dir)
                #expect(try store.count(of: "Ride", in: "/SQLDemo") == 300)
                let ride = try #require(try store.object(of: "Ride", identity: 150, in: "/SQLDemo"))
                #expect(ride.values["backup"] == .null && ride.values["driver"] == 1 && ride.values["km"] == 150)
                #expect(try store.object(of: "Ride", identity: 151, in: "/SQLDemo")?.values["backup"] == 2)
                let inserts = try store.history(of: "/SQLDemo").flatMap(\.instructions).filter {
                    if case .insert("Ride", _, _) = $0 { true } else { false }
                }
                #expect(inserts.count == 300)
                #expect(
                    inserts.contains {
                        if case .insert(_, 150, let v) = $0 { v["backup"] == .null && v["driver"] == 1 } else { false }
                    })
            }
        }

        /// The loader remembers the link targets it found, so as not to look them up in every
        /// batch; an object deleted meanwhile by someone else (an app) must be looked up again:
        /// links to it are then dangling, not stored.
        @Test(.timeLimit(.minutes(1)))
        func aTargetDeletedDuringTheLoadIsLookedUpAgain() async throws {
            try await LoadHarness.withDatabase { settings, pg, dir in
                _ = try await pg.sql(
                    """
                    CREATE TABLE "Driver" (id bigint PRIMARY KEY);
                    CREATE TABLE "Ride" (id bigint PRIMARY KEY, driver bigint, km bigint NOT NULL);
                    INSERT INTO "Driver" SELECT i FROM generate_series(1, 3) i;
                    INSERT INTO "Ride" SELECT i, 1 + i % 3, i FROM generate_series(1, 300) i;
                    """)
                let schema = """
                    [{"name": "Driver", "primaryKey": "id", "properties": {"id": "int"}},
                     {"name": "Ride", "primaryKey": "id", "properties": {"id": "int", "driver": "Driver", "km": "int"}}]
                    """
                let config = try SyncHarness.config(
                    settings, store: dir, extra: #", "loader": {"danglingForeignKeys": "nullify", "batchSize": 100}"#,
                    schema: schema, createSchema: false)
                let store = try RealmStore(directory: dir)
                // After the first batch of rides, an app deletes driver 2 (its links become null).
                let summary = try await LoadHarness.load(config) { p in
                    guard p.step.table == "Ride", p.rows == 100 else { return }
                    _ = try! store.write(to: "/SQLDemo", origin: "app") { tx in try tx.delete("Driver", 2) }
                }
                #expect(try store.object(of: "Driver", identity: 2, in: "/SQLDemo") == nil)
                #expect(try store.count(of: "Ride", in: "/SQLDemo") == 300)
                // Rides 101 to 300 with driver 2: the load found it missing and set null.
                #expect(summary.tables.first { $0.table == "Ride" }?.danglingLinks == 66)
                for id in [1, 4, 298] {
                    #expect(
                        try store.object(of: "Ride", identity: .int(Int64(id)), in: "/SQLDemo")?.values["driver"]
                            == .null)
                }
                #expect(try store.object(of: "Ride", identity: 299, in: "/SQLDemo")?.values["driver"] == 3)
            }
        }

        /// Text keys that differ only in Unicode normalization ("café" composed and decomposed)
        /// are two keys to Postgres and to the store: a link to the one that does not exist is
        /// dangling, in whatever batch it comes, and a link table's rows for the two are two lists.
        @Test(.timeLimit(.minutes(1)))
        func keysThatDifferOnlyInNormalizationAreTwoKeys() async throws {
            try await LoadHarness.withDatabase { settings, pg, dir in
                _ = try await pg.sql(
                    """
                    CREATE TABLE "Product" (id text PRIMARY KEY);
                    CREATE TABLE "Customer" (id text PRIMARY KEY);
                    CREATE TABLE "Purchase" (id bigint PRIMARY KEY, product text);
                    CREATE TABLE "Customer_favorites" (oid text NOT NULL, idx integer NOT NULL, target text NOT NULL);
                    INSERT INTO "Product" VALUES ('caf' || U&'\\00E9'), ('x');
                    INSERT INTO "Customer" VALUES ('caf' || U&'\\00E9'), ('cafe' || U&'\\0301');
                    INSERT INTO "Purchase" VALUES (1, 'caf' || U&'\\00E9'), (2, 'cafe' || U&'\\0301'), (3, 'x');
                    INSERT INTO "Customer_favorites" VALUES ('caf' || U&'\\00E9', 0, 'x'),
                        ('cafe' || U&'\\0301', 0, 'caf' || U&'\\00E9'), ('cafe' || U&'\\0301', 1, 'cafe' || U&'\\0301');
                    """)
                let schema = """
                    [{"name": "Product", "primaryKey": "id", "properties": {"id": "string"}},
                     {"name": "Customer", "primaryKey": "id", "properties": {"id": "string", "favorites": "Product[]"}},
                     {"name": "Purchase", "primaryKey": "id", "properties": {"id": "int", "product": "Product"}}]
                    """
                let config = try SyncHarness.config(
                    settings, store: dir, extra: #", "loader": {"danglingForeignKeys": "nullify", "batchSize": 1}"#,
                    schema: schema, createSchema: false)
                let summary = try await LoadHarness.load(config)
                let (composed, decomposed) = (Value.string("caf\u{E9}"), Value.string("cafe\u{301}"))
                #expect(summary.tables.first { $0.table == "Purchase" }?.danglingLinks == 1)
                #expect(summary.tables.first { $0.table == "Customer_favorites" }?.danglingLinks == 1)
                let store = try RealmStore(directory: dir)
                #expect(try store.object(of: "Purchase", identity: 1, in: "/SQLDemo")?.values["product"] == composed)
                #expect(try store.object(of: "Purchase", identity: 2, in: "/SQLDemo")?.values["product"] == .null)
                #expect(try store.list("favorites", of: "Customer", identity: composed, in: "/SQLDemo") == ["x"])
                #expect(try store.list("favorites", of: "Customer", identity: decomposed, in: "/SQLDemo") == [composed])
            }
        }

        /// A link table whose owner column spells one key two ways (uuids as text, in two
        /// cases) gives that owner two runs of rows that sort apart: the later ones are appended
        /// to its list, in one batch or another, on a first load and on a second one, and the
        /// list stays a list (each item at its own index).
        @Test(.timeLimit(.minutes(1)))
        func anOwnerWhoseRowsComeApartKeepsAllItsItems() async throws {
            try await LoadHarness.withDatabase { settings, pg, dir in
                let (lower, upper) = ("bbbbbbbb-0000-4000-8000-000000000001", "BBBBBBBB-0000-4000-8000-000000000001")
                _ = try await pg.sql(
                    """
                    CREATE TABLE "Product" (id bigint PRIMARY KEY);
                    CREATE TABLE "Customer" (id uuid PRIMARY KEY);
                    CREATE TABLE "Customer_favorites" (oid text NOT NULL, idx integer NOT NULL, target bigint NOT NULL);
                    INSERT INTO "Product" VALUES (1), (2), (3);
                    INSERT INTO "Customer" VALUES ('\(lower)'), ('bbbbbbba-0000-4000-8000-000000000002');
                    INSERT INTO "Customer_favorites" VALUES ('\(lower)', 0, 1), ('\(lower)', 1, 2), ('\(upper)', 2, 3),
                        ('\(upper)', 3, 1), ('bbbbbbba-0000-4000-8000-000000000002', 0, 2);
                    """)
                let schema = """
                    [{"name": "Product", "primaryKey": "id", "properties": {"id": "int"}},
                     {"name": "Customer", "primaryKey": "id", "properties": {"id": "uuid", "favorites": "Product[]"}}]
                    """
                let owner = Value.uuid(UUID(uuidString: lower)!)
                for batchSize in [1, 7] {
                    var config = try SyncHarness.config(
                        settings, store: dir, extra: #", "loader": {"batchSize": \#(batchSize)}"#, schema: schema,
                        createSchema: false)
                    config.realm.store = dir + "/\(batchSize)"
                    let store = try RealmStore(directory: config.realm.store)
                    for run in 1...2 {
                        _ = try await LoadHarness.load(config)
                        let list = try store.list("favorites", of: "Customer", identity: owner, in: "/SQLDemo")
                        #expect(
                            list == [1, 2, 3, 1] || list == [3, 1, 1, 2], "batch \(batchSize), run \(run): \(list)")
                    }
                    // Each item at its own index: erasing the last leaves three.
                    try store.write(to: "/SQLDemo", origin: "app") { tx in
                        try tx.listErase("Customer", owner, "favorites", at: 3)
                    }
                    #expect(try store.list("favorites", of: "Customer", identity: owner, in: "/SQLDemo").count == 3)
                }
            }
        }

        /// Bad rows of a link table: a key of the wrong kind is an error naming the table and
        /// column; a NULL key refers to nothing, an error naming the row, or with `nullify` a
        /// row left out.
        @Test(.timeLimit(.minutes(1)))
        func badLinkTableRowsNameTheirTableAndColumn() async throws {
            try await LoadHarness.withDatabase { settings, pg, dir in
                _ = try await pg.sql(
                    """
                    CREATE TABLE "Product" (id bigint PRIMARY KEY);
                    CREATE TABLE "Customer" (id bigint PRIMARY KEY);
                    CREATE TABLE "Customer_favorites" (oid bigint, idx integer NOT NULL, target bigint);
                    INSERT INTO "Product" VALUES (1), (2);
                    INSERT INTO "Customer" VALUES (7);
                    INSERT INTO "Customer_favorites" VALUES (7, 0, 1), (7, 1, NULL), (7, 2, 2), (NULL, 0, 1);
                    """)
                let schema = """
                    [{"name": "Product", "primaryKey": "id", "properties": {"id": "int"}},
                     {"name": "Customer", "primaryKey": "id", "properties": {"id": "int", "favorites": "Product[]"}}]
                    """
                let strict = try SyncHarness.config(
                    settings, store: dir + "/strict", schema: schema, createSchema: false)
                let error = await #expect(throws: RealmAdapterError.self) { try await LoadHarness.load(strict) }
                #expect(
                    error?.message.contains("Table Customer_favorites, column") == true
                        && error?.message.contains("danglingForeignKeys") == true, "\(error?.message ?? "")")

                let lenient = try SyncHarness.config(
                    settings, store: dir + "/lenient", extra: #", "loader": {"danglingForeignKeys": "nullify"}"#,
                    schema: schema, createSchema: false)
                let summary = try await LoadHarness.load(lenient)
                #expect(summary.tables.first { $0.table == "Customer_favorites" }?.danglingLinks == 1)
                let store = try RealmStore(directory: dir + "/lenient")
                #expect(try store.list("favorites", of: "Customer", identity: 7, in: "/SQLDemo") == [1, 2])

                _ = try await pg.sql(
                    #"ALTER TABLE "Customer_favorites" ALTER COLUMN target TYPE text; DELETE FROM "Customer_favorites" WHERE target IS NULL OR oid IS NULL"#
                )
                let wrongKind = await #expect(throws: RealmAdapterError.self) { try await LoadHarness.load(lenient) }
                #expect(
                    wrongKind?.message.hasPrefix("Table Customer_favorites, column target:") == true,
                    "\(wrongKind?.message ?? "")")
            }
        }

        /// Per-user paths: one table fans out to a Realm per user.        /// Per-user paths: one table fans out to a Realm per user.        /// Per-user paths: one table fans out to a Realm per user.        /// Per-user paths: one table fans out to a Realm per user.
        @Test(.timeLimit(.minutes(1)))
        func routedTableFansOutToManyRealms() async throws {
            try await LoadHarness.withDatabase { settings, pg, dir in
                _ = try await pg.sql(
                    """
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

extension PostgresIntegration.LoaderTests {
    /// 300 tasks of user0 and user1 (by id parity) loaded into `/{owner}/tasks` in batches of
    /// 100, user0's first: `appWrite` runs after the first batch, then `check` after the load.
    static func loadTasks(
        _ name: String = #function, appWrite: @escaping @Sendable (RealmStore, String) throws -> Void,
        check: (RealmStore, Configuration) throws -> Void
    ) async throws {
        try await LoadHarness.withDatabase(name) { settings, pg, dir in
            _ = try await pg.sql(
                """
                CREATE TABLE "Task" (id bigint PRIMARY KEY, title text, owner text NOT NULL);
                INSERT INTO "Task" SELECT i, 'task ' || i, 'user' || (i % 2) FROM generate_series(1, 300) i;
                """)
            let schema = #"[{"name": "Task", "primaryKey": "id", "properties": {"id": "int", "title": "string?"}}]"#
            let config = try SyncHarness.config(
                settings, store: dir, extra: #", "loader": {"batchSize": 100}"#, schema: schema, path: "/{owner}/tasks")
            let store = try RealmStore(directory: dir)
            _ = try await LoadHarness.load(config) { p in
                guard p.step.table == "Task", p.rows == 100 else { return }
                try! appWrite(store, schema)
            }
            try check(store, config)
        }
    }

    /// The load's own transactions move the daemon's cursors as they commit (the hand-off then
    /// has little left to do), but never past an app's write that came between two of them:
    /// the daemon must still send it to the database.
    @Test(.timeLimit(.minutes(1)))
    func anAppWriteDuringALoadStaysPending() async throws {
        // After the first batch (all of user0's), an app writes to user0's Realm; the next batch
        // writes there again.
        try await Self.loadTasks(
            appWrite: { store, _ in
                _ = try store.write(to: "/user0/tasks", origin: "app") { tx in
                    try tx.create("Task", ["id": 1_000, "title": "from the app"])
                }
            },
            check: { store, config in
                let adapter = try Adapter(store: store, name: config.realm.adapterName, pathRegex: ".*")
                let database = try adapter.databaseOrderCursor(logger: Logger(label: "test"))
                #expect(try store.version(of: "/user0/tasks") == 3)
                #expect(try adapter.pending("/user0/tasks", limit: 10).map(\.version) == [2])
                #expect(try adapter.cursor("/user0/tasks") == 1 && database.cursor("/user0/tasks") == 1)
                let user1 = try store.version(of: "/user1/tasks")
                #expect(try adapter.cursor("/user1/tasks") == user1 && database.cursor("/user1/tasks") == user1)
                #expect(try adapter.pendingCounts().map(\.path) == ["/user0/tasks"])
            })
    }

    /// An app that creates a Realm during the load, with a key the database has, gets its Realm
    /// merged into, as one the load found at its start would be (a probe's load failed on the
    /// duplicate primary key, leaving the Realm half loaded).
    @Test(.timeLimit(.minutes(1)))
    func aRealmAnAppCreatesDuringTheLoadIsMergedInto() async throws {
        // After the first batch (user0's only), an app creates user1's Realm with task 1, which
        // the database has for user1 too.
        try await Self.loadTasks(
            appWrite: { store, schema in
                _ = try store.write(to: "/user1/tasks", origin: "app") { tx in
                    try tx.adopt(try Schema(json: JSONValue(parsing: schema)))
                    try tx.create("Task", ["id": 1, "title": "from the app"])
                }
            },
            check: { store, config in
                #expect(try store.count(of: "Task", in: "/user1/tasks") == 150)
                let adapter = try Adapter(store: store, name: config.realm.adapterName, pathRegex: ".*")
                #expect(try adapter.pending("/user1/tasks", limit: 10).map(\.origin) == ["app"])
            })
    }

    /// `SyncHarness.busSchema`'s tables, made by hand.
    static let busTables = """
        CREATE TABLE "Driver" (id bigint PRIMARY KEY, name text, hired timestamptz);
        CREATE TABLE "Bus" (vehicle bigint PRIMARY KEY, fleet_id text, seats bigint NOT NULL, driver bigint REFERENCES "Driver" (id),
                            price numeric, tags text[], photo bytea, note text);
        """

    static let itemSchema =
        #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "label": "string?"}}]"#

    static func createItems(_ pg: PostgresConnection, count: Int) async throws {
        _ = try await pg.sql(
            """
            CREATE TABLE "Item" (id bigint PRIMARY KEY, n bigint NOT NULL, label text);
            INSERT INTO "Item" SELECT i, 0, 'item ' || i FROM generate_series(1, \(count)) i;
            ANALYZE "Item";
            """)
    }

    /// Every row as (id, n, label), from the database and from the Realm.
    static func itemsInDatabase(_ pg: PostgresConnection) async throws -> [[String?]] {
        try await pg.sql(#"SELECT id::text, n::text, label FROM "Item" ORDER BY "Item".id"#)  // not the text column
    }

    /// Where two row lists first differ, for failure messages.
    static func difference(_ a: [[String?]], _ b: [[String?]]) -> String {
        guard
            let i = a.indices.first(where: { $0 < b.count && a[$0] != b[$0] })
                ?? (a.count == b.count ? nil : min(a.count, b.count))
        else { return "equal" }
        return
            "\(a.count) vs \(b.count) rows; first difference at \(i): \(i < a.count ? "\(a[i])" : "-") vs \(i < b.count ? "\(b[i])" : "-")"
    }

    static func itemsInRealm(_ store: RealmStore, _ path: String = "/SQLDemo") throws -> [[String?]] {
        guard try store.contains(path) else { return [] }
        var rows: [[String?]] = []
        try store.forEachObject(of: "Item", in: path) { o in
            func text(_ v: Value?) -> String? {
                if case .string(let s)? = v { s } else if case .int(let i)? = v { String(i) } else { nil }
            }
            rows.append([text(o.identity), text(o.values["n"]), text(o.values["label"])])
        }
        return rows
    }

    /// The load's snapshot and the daemon's stream meet exactly: with a writer inserting,
    /// updating and deleting rows all through the load, the daemon started afterwards brings
    /// the Realm to the database's contents, and no transaction is applied twice (its update
    /// would lower a row's n again) or out of order.
    @Test(.timeLimit(.minutes(3)))
    func rowsCommittedDuringTheLoadArriveExactlyOnce() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            let n = 30_000
            try await Self.createItems(pg, count: n)
            let config = try SyncHarness.config(
                settings, store: dir, extra: #", "loader": {"batchSize": 300}"#, schema: Self.itemSchema)
            let writer = try await PostgresConnection.connect(settings)
            defer { writer.close() }
            let progress = Counter()
            let writes = Task {
                var k = 0
                while !Task.isCancelled {
                    k += 1
                    let id = k
                    try await writer.session { s in  // three transactions
                        try s.query(#"INSERT INTO "Item" VALUES ($1, 0, 'new')"#, [String(1_000_000 + id)])
                        try s.query(
                            #"UPDATE "Item" SET n = n + 1, label = 'changed' WHERE id = $1"#, [String(id * 7 % n + 1)])
                        if id < n / 2 { try s.query(#"DELETE FROM "Item" WHERE id = $1"#, [String(n - id)]) }
                    }
                    progress.set(k)
                    try await Task.sleep(for: .milliseconds(3))
                }
            }
            try await eventually("the writer to get going") { progress.value > 20 }
            let before = progress.value
            let summary = try await LoadHarness.load(config)
            let during = progress.value - before
            try await eventually("more writes after the load") { progress.value > before + during + 50 }
            writes.cancel()
            _ = await writes.result
            #expect(during > 10, "the writer committed \(during) rounds during the load")
            #expect(summary.handOffPosition != nil)
            // The last transaction: once it is in the Realm, everything before it is too (the stream is ordered).
            _ = try await pg.sql(#"INSERT INTO "Item" VALUES (9999999, 0, 'last')"#)

            let store = try RealmStore(directory: dir)
            _ = try Adapter(store: store, name: "audit", pathRegex: ".*")  // keeps the whole history
            let h = SyncHarness(settings: settings, config: config, store: store, pg: pg, mapping: try Mapping(config))
            try await h.withDaemon {
                try await eventually("the last row in the Realm", timeout: .seconds(90)) {
                    try h.object("Item", 9_999_999) != nil
                }
            }
            let (realm, expected) = (try Self.itemsInRealm(store), try await Self.itemsInDatabase(pg))
            let same = realm == expected
            #expect(same, "\(Self.difference(realm, expected))")
            // In the Realm's history no object's n goes back (the writer only raises it: a
            // transaction from before the snapshot streamed again would lower it), and the
            // stream's positions come once each, in order.
            #expect(try HistoryAudit.problems(store) == [])
        }
    }
}

/// A value shared between a writer task and the test.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    var value: Int { lock.withLock { n } }
    func set(_ v: Int) { lock.withLock { n = v } }
}

extension PostgresIntegration.LoaderTests {
    /// `realm-adapter load` killed (failpoints `load.after-batch`, then `load.before-hand-off`):
    /// the daemon refuses to start, and the next load ends with exactly the database's rows
    /// (deleted ones gone, changed ones changed), after which another load changes nothing.
    @Test(.timeLimit(.minutes(5)))
    func interruptedLoadRunsAgainToTheSameContents() async throws {
        try await LoadHarness.withDatabase { settings, pg, _ in
            let n = 30_000
            try await Self.createItems(pg, count: n)
            let (dir, file) = try DaemonProcess.workspace(settings, schema: Self.itemSchema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try DaemonProcess.edit(file, replacing: #""schema":"#, with: #""loader": {"batchSize": 2000}, "schema":"#)
            let cli = ChildProcess.built("realm-adapter")
            let store = try RealmStore(directory: dir + "/store")
            for (failpoint, spec) in [(Failpoint.loadAfterBatch, "4*off->kill"), (.loadBeforeHandOff, "kill")] {
                let killed = try await ChildProcess.run(
                    cli, ["load", "--config", file, "--log-level", "warning"],
                    environment: DaemonProcess.environment(failpoints: "\(failpoint.name)=\(spec)"))
                #expect(
                    killed.status == 128 + SIGKILL && killed.stderr.contains("failpoint \(failpoint.name)"),
                    "\(killed.stderr)")
                let loaded = try store.count(of: "Item", in: "/SQLDemo")
                #expect(
                    failpoint == .loadBeforeHandOff ? loaded == n : loaded == 5 * 2000, "\(loaded) rows at the kill")

                let daemon = try await ChildProcess.run(cli, ["run", "--config", file])
                #expect(daemon.status == 1)
                #expect(daemon.stderr.contains("A load into this store did not finish"))
            }

            _ = try await pg.sql(
                """
                DELETE FROM "Item" WHERE id <= 1000 OR id > \(n - 1000);
                UPDATE "Item" SET n = 7, label = NULL WHERE id BETWEEN 5000 AND 6000;
                INSERT INTO "Item" SELECT i, 1, 'late' FROM generate_series(\(n + 1), \(n + 500)) i;
                """)
            let again = try await ChildProcess.run(cli, ["load", "--config", file, "--log-level", "warning"])
            #expect(again.status == 0, "\(again.stderr)")
            let (realm, database) = (try Self.itemsInRealm(store), try await Self.itemsInDatabase(pg))
            let same = realm == database  // not inside #expect: its diff of many rows takes long
            #expect(same, "\(Self.difference(realm, database))")

            let version = try store.version(of: "/SQLDemo")
            let third = try await ChildProcess.run(cli, ["load", "--config", file, "--log-level", "warning"])
            #expect(third.status == 0, "\(third.stderr)")
            #expect(try store.version(of: "/SQLDemo") == version, "a load of unchanged rows writes nothing")
            let stillSame = try Self.itemsInRealm(store) == database
            #expect(stillSame)
        }
    }

    /// A million rows load in bounded memory: the loader streams, whatever the table's size.
    @Test(.timeLimit(.minutes(5)))
    func aMillionRowsLoadInFlatMemory() async throws {
        try await LoadHarness.withDatabase { settings, pg, _ in
            let (dir, file) = try DaemonProcess.workspace(settings, schema: Self.itemSchema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var peaks: [Int] = []
            for count in [100_000, 1_000_000] {
                _ = try await pg.sql(#"DROP TABLE IF EXISTS "Item""#)
                try await Self.createItems(pg, count: count)
                try? FileManager.default.removeItem(atPath: dir + "/store")
                let load = try ChildProcess(
                    ChildProcess.built("realm-adapter"), ["load", "--config", file, "--log-level", "warning"],
                    stdout: dir + "/load.log", stderr: dir + "/load.log")
                #expect(
                    await load.wait() == 0, "\((try? String(contentsOfFile: dir + "/load.log", encoding: .utf8)) ?? "")"
                )
                peaks.append(try #require(load.peakMemory))
                #expect(try RealmStore(directory: dir + "/store").count(of: "Item", in: "/SQLDemo") == count)
            }
            let mb = peaks.map { $0 >> 20 }
            // Streaming is the growth: flat from 100k to 1M rows. The level depends on what else
            // runs (this debug build: 52 and 61 MB alone, 103 and 103 MB beside the integration
            // suites, past 200 MB at 1M in a full `scripts/test.sh`, flat each time), so the
            // absolute bound only catches a gross regression; docs/performance.md measures the
            // release build's peak against its 200 MB target.
            #expect(mb[1] < 300, "peak memory at 1M rows: \(mb[1]) MB (at 100k: \(mb[0]) MB)")
            #expect(mb[1] < mb[0] + 40, "peak memory grew from \(mb[0]) MB at 100k rows to \(mb[1]) MB at 1M")
        }
    }

    /// `--dry-run` writes nothing; `--tables` loads a subset and leaves the slot where the
    /// daemon left it; an unknown name is an error that lists the mapped tables.
    @Test(.timeLimit(.minutes(2)))
    func dryRunAndSubsetsFromTheCommandLine() async throws {
        try await LoadHarness.withDatabase { settings, pg, _ in
            _ = try await pg.sql(
                """
                \(Self.busTables)
                INSERT INTO "Driver" (id, name) VALUES (1, 'Ann');
                INSERT INTO "Bus" (vehicle, seats, driver) VALUES (7, 40, 1);
                """)
            let (dir, file) = try DaemonProcess.workspace(settings, schema: SyncHarness.busSchema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cli = ChildProcess.built("realm-adapter")

            let dry = try await ChildProcess.run(cli, ["load", "--config", file, "--dry-run"])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(
                dry.stdout.contains("Dry run") && dry.stdout.contains("Driver") && dry.stdout.contains("estimated rows")
            )
            // Tables never analyzed still get an estimate, and say how it was made.
            #expect(!dry.stdout.contains("unknown") && dry.stdout.contains("planner"), "\(dry.stdout)")
            #expect(try RealmStore(directory: dir + "/store").realmPaths().isEmpty)
            #expect(
                try await pg.sql("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()") == [
                    ["0"]
                ])

            let full = try await ChildProcess.run(cli, ["load", "--config", file])
            #expect(full.status == 0, "\(full.stderr)")
            #expect(full.stdout.contains("Hand-off at"))
            let slot = try await pg.sql(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE database = current_database()")

            _ = try await pg.sql(#"INSERT INTO "Driver" (id, name) VALUES (2, 'Bo')"#)
            let subset = try await ChildProcess.run(cli, ["load", "--config", file, "--tables", "Driver"])
            #expect(subset.status == 0, "\(subset.stderr)")
            #expect(subset.stdout.contains("kept its place") && !subset.stdout.contains("Bus "))
            #expect(
                try await pg.sql(
                    "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE database = current_database()")
                    == slot)
            #expect(
                try RealmStore(directory: dir + "/store").object(of: "Driver", identity: 2, in: "/SQLDemo")?.values[
                    "name"] == "Bo")

            let unknown = try await ChildProcess.run(cli, ["load", "--config", file, "--tables", "Nope"])
            #expect(unknown.status == 1)
            #expect(
                unknown.stderr.contains("--tables names Nope") && unknown.stderr.contains("mapped tables: Driver, Bus"))

            // The daemon then replays, from the slot's own place, what the partial load already
            // holds (driver 2), and goes on: both sides end equal.
            _ = try await pg.sql(
                #"UPDATE "Driver" SET name = 'Bea' WHERE id = 2; INSERT INTO "Driver" (id, name) VALUES (3, 'Cy')"#)
            let daemon = try DaemonProcess(config: file, log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            let store = try RealmStore(directory: dir + "/store")
            try await eventually("driver 3 in the Realm") {
                try store.object(of: "Driver", identity: 3, in: "/SQLDemo") != nil
            }
            #expect(await daemon.terminate() == 0)
            let names = try store.objects(of: "Driver", in: "/SQLDemo").map { $0.values["name"] ?? .null }
            #expect(names == ["Ann", "Bea", "Cy"])
        }
    }
}

extension PostgresIntegration.LoaderTests {
    /// Values that COPY escapes or that have fast paths arrive exactly as the daemon decodes them.
    @Test(.timeLimit(.minutes(1)))
    func trickyValuesLoadExactly() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            _ = try await pg.sql(
                """
                \(Self.busTables)
                INSERT INTO "Driver" VALUES (1, E'tab\\there\\nnew line \\\\ back\\\\N ünï', '2026-11-22 03:04:05.123456+02'), (2, '', NULL);
                INSERT INTO "Bus" VALUES (7, E'\\\\N', -9223372036854775808, 1, 12345678901234567890.123, ARRAY['a,b', 'say "hi"', E'x\\ty'], '\\x00ff0a', NULL),
                                         (8, NULL, 9223372036854775807, NULL, NULL, '{}', '\\x', '');
                """)
            let config = try SyncHarness.config(settings, store: dir, createSchema: false)
            _ = try await LoadHarness.load(config)
            let store = try RealmStore(directory: dir)
            func object(_ type: String, _ id: Value) throws -> RealmObject {
                try #require(try store.object(of: type, identity: id, in: "/SQLDemo"))
            }
            #expect(try object("Driver", 1).values["name"] == "tab\there\nnew line \\ back\\N ünï")
            #expect(
                try object("Driver", 1).values["hired"] == .date(Timestamp(iso8601: "2026-11-22T01:04:05.123456Z")!))
            #expect(try object("Driver", 2).values["name"] == "" && object("Driver", 2).values["hired"] == .null)
            let bus = try object("Bus", 7)
            #expect(bus.values["fleet_id"] == "\\N")
            #expect(bus.values["seats"] == .int(.min))
            #expect(bus.values["price"] == .decimal("12345678901234567890.123"))
            #expect(bus.values["tags"] == .list(["a,b", "say \"hi\"", "x\ty"]))
            #expect(bus.values["photo"] == .data(Data([0, 255, 10])))
            #expect(bus.values["note"] == .null)
            let other = try object("Bus", 8)
            #expect(
                other.values["seats"] == .int(.max) && other.values["tags"] == .list([])
                    && other.values["photo"] == .data(Data()) && other.values["note"] == "")
        }
    }
}

extension PostgresIntegration.LoaderTests {
    /// The legacy documentation's example (Bus, Driver, Schedule, Route), exactly as the
    /// quickstart loads it: examples/quickstart's SQL files and configuration.
    @Test(.timeLimit(.minutes(1)))
    func loadsTheLegacyExampleSchema() async throws {
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("examples/quickstart")
        try await LoadHarness.withDatabase { settings, pg, dir in
            for file in ["busdemo.sql", "busdemo-data.sql"] {
                _ = try await pg.sql(try String(contentsOf: examples.appendingPathComponent(file), encoding: .utf8))
            }
            // The quickstart's schema and mapping, pointed at this test's database and store.
            let quickstart = try Configuration.load(
                file: examples.appendingPathComponent("adapter.json").path, connectors: .postgres)
            let schema = quickstart.schema.json.serialized()
            let config = try SyncHarness.config(
                settings, store: dir,
                extra:
                    #", "mapping": {"tables": {"bus": "Bus", "driver": "Driver", "schedule": "Schedule", "route": "Route"}}"#,
                schema: schema, createSchema: false)
            let summary = try await LoadHarness.load(config)
            #expect(summary.tables.map(\.table) == ["route", "schedule", "bus", "driver"])
            let store = try RealmStore(directory: dir)
            let bus = try #require(try store.object(of: "Bus", identity: 101, in: "/SQLDemo"))
            #expect(bus.values["Scheduleid"] == 1 && bus.values["fleet_id"] == "F-101")
            #expect(try store.object(of: "Driver", identity: 2, in: "/SQLDemo")?.values["Busvehicle"] == 102)
            #expect(try store.object(of: "Schedule", identity: 1, in: "/SQLDemo")?.values["Routeid"] == "R1")
            #expect(try store.count(of: "Route", in: "/SQLDemo") == 2)
        }
    }
}

extension PostgresIntegration.LoaderTests {
    /// Lists of links in per-user Realms: each owner's list goes to its owner's Realm, when
    /// loading and when syncing, both ways.
    @Test(.timeLimit(.minutes(1)))
    func listsOfLinksInPerUserRealms() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            let schema = """
                [{"name": "Stop", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}},
                 {"name": "Route", "primaryKey": "id", "properties": {"id": "string", "stops": "Stop[]"}}]
                """
            let config = try SyncHarness.config(settings, store: dir, schema: schema, path: "/{owner}/routes")
            _ = try await LoadHarness.load(config)  // creates the tables (createSchema)
            _ = try await pg.sql(
                """
                INSERT INTO "Stop" VALUES (1, 'a', 'u1'), (2, 'b', 'u1'), (3, 'c', 'u2');
                INSERT INTO "Route" VALUES ('R1', 'u1'), ('R2', 'u2');
                INSERT INTO "Route_stops" VALUES ('R1', 0, 2), ('R1', 1, 1), ('R2', 0, 3);
                """)
            _ = try await LoadHarness.load(config)
            let store = try RealmStore(directory: dir)
            #expect(try store.list("stops", of: "Route", identity: "R1", in: "/u1/routes") == [2, 1])
            #expect(try store.list("stops", of: "Route", identity: "R2", in: "/u2/routes") == [3])
            #expect(try store.object(of: "Route", identity: "R1", in: "/u2/routes") == nil)

            let h = SyncHarness(settings: settings, config: config, store: store, pg: pg, mapping: try Mapping(config))
            try await h.withDaemon {
                _ = try await pg.sql(#"INSERT INTO "Route_stops" VALUES ('R1', 2, 1)"#)
                try await eventually("the stop appended in u1's Realm") {
                    try store.list("stops", of: "Route", identity: "R1", in: "/u1/routes") == [2, 1, 1]
                }
                try store.write(to: "/u2/routes", origin: "app") { tx in try tx.listAppend("Route", "R2", "stops", 3) }
                try await eventually("u2's list in the link table") {
                    try await pg.sql(#"SELECT oid, idx, target FROM "Route_stops" WHERE oid = 'R2' ORDER BY idx"#) == [
                        ["R2", "0", "3"], ["R2", "1", "3"],
                    ]
                }
            }
        }
    }
}

extension PostgresIntegration.LoaderTests {
    /// A list of links to its own type, loaded in batches of a few owners: owners and targets
    /// are one type, remembered across batches (``KnownObjects``); a missing target is dropped
    /// with `nullify`, and a second load (merging) leaves the same lists.
    @Test(.timeLimit(.minutes(1)))
    func listsOfLinksToTheirOwnType() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            _ = try await pg.sql(
                """
                CREATE TABLE "Person" (id bigint PRIMARY KEY);
                CREATE TABLE "Person_friends" (oid bigint NOT NULL, idx integer NOT NULL, target bigint NOT NULL);
                INSERT INTO "Person" SELECT i FROM generate_series(1, 30) i;
                INSERT INTO "Person_friends" SELECT i, 0, i % 30 + 1 FROM generate_series(1, 30) i;
                INSERT INTO "Person_friends" SELECT i, 1, (i + 1) % 30 + 1 FROM generate_series(1, 30) i;
                INSERT INTO "Person_friends" VALUES (5, 2, 99), (5, 3, 5);
                """)
            let schema = """
                [{"name": "Person", "primaryKey": "id", "properties": {"id": "int", "friends": "Person[]"}}]
                """
            let config = try SyncHarness.config(
                settings, store: dir, extra: #", "loader": {"danglingForeignKeys": "nullify", "batchSize": 4}"#,
                schema: schema, createSchema: false)
            for run in 1...2 {
                let summary = try await LoadHarness.load(config)
                #expect(summary.tables.first { $0.table == "Person_friends" }?.danglingLinks == 1, "run \(run)")
                let store = try RealmStore(directory: dir)
                #expect(
                    try store.list("friends", of: "Person", identity: 5, in: "/SQLDemo") == [6, 7, 5], "run \(run)")
                #expect(try store.list("friends", of: "Person", identity: 29, in: "/SQLDemo") == [30, 1], "run \(run)")
                #expect(try store.list("friends", of: "Person", identity: 30, in: "/SQLDemo") == [1, 2], "run \(run)")
            }
        }
    }
}

/// A snapshot that hands rows over as values only (``LoadSnapshot``'s default field path), to
/// hold the connector's typed fields against.
final class ValuesOnlySnapshot: LoadSnapshot, @unchecked Sendable {
    let base: LoadSnapshot
    init(_ base: LoadSnapshot) { self.base = base }
    var handOffPosition: String? { base.handOffPosition }
    func estimatedRows(_ table: String) throws -> Int? { try base.estimatedRows(table) }
    func distinctCount(_ table: String, columns: [String]) throws -> Int {
        try base.distinctCount(table, columns: columns)
    }
    func rows(_ table: String, columns: [String], orderedBy: [String], _ body: ([Value]) throws -> Void) throws {
        try base.rows(table, columns: columns, orderedBy: orderedBy, body)
    }
    func linkRows(
        _ list: LinkListMapping, owner: TableMapping, ownerColumns: [String], _ body: ([Value]) throws -> Void
    ) throws {
        try base.linkRows(list, owner: owner, ownerColumns: ownerColumns, body)
    }
    func writeRealmIds(_ assignments: [RealmIdAssignment]) throws { try base.writeRealmIds(assignments) }
    func finish() throws { try base.finish() }
}

extension PostgresIntegration.LoaderTests {
    /// The connector's typed fields (written into the store without a `Value` where the column
    /// maps plainly) load exactly what the same rows handed over as values do: renames,
    /// converters, coercions, NULLs, non-ASCII text, every binary type, defaults of properties
    /// no column fills, per-user routing. A re-run merges and leaves Realm-only properties alone;
    /// a NULL in a required column is an error naming table, column and key.
    @Test(.timeLimit(.minutes(2)))
    func typedFieldsLoadWhatValuesLoad() async throws {
        try await LoadHarness.withDatabase { settings, pg, dir in
            _ = try await pg.sql(
                """
                CREATE TABLE readings (id bigint PRIMARY KEY, label text NOT NULL, note text, amount integer NOT NULL, price numeric(12,3),
                                       at timestamptz, day date, code uuid, ok boolean, raw bytea, ratio real, big double precision,
                                       kind_name text, owner text NOT NULL, small smallint, count_text text);
                INSERT INTO readings SELECT i, 'label ' || i, CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN 'ünïcødé ' || i ELSE 'plain ' || i END,
                    i * 2, i * 1.125, timestamptz '2026-01-01' + i * interval '1.5 second', date '2026-01-01' + i, md5(i::text)::uuid, i % 2 = 0,
                    CASE WHEN i % 4 = 0 THEN NULL ELSE decode(lpad(to_hex(i), 6, '0'), 'hex') END, i / 7.0, i * 1e10, 'k' || (i % 5),
                    'u' || (i % 3), i % 100, (i * 11)::text
                FROM generate_series(1, 2500) i;
                ANALYZE readings;
                """)
            let schema = """
                [{"name": "Reading", "primaryKey": "id", "properties": {
                    "id": "int", "label": "string", "note": "string?", "amount": "double", "price": "string?", "at": "date?", "day": "date?",
                    "code": "uuid?", "ok": "bool", "raw": "data?", "ratio": "float?", "big": "double?", "kind": "string?", "owner": "string",
                    "small": "int?", "count_text": "int?", "extra": {"type": "int", "default": 7}, "memo": "string?"}}]
                """
            let extra =
                #", "mapping": {"tables": {"readings": "Reading"}, "columns": {"Reading": {"kind_name": "kind"}}, "convert": {"Reading": {"price": "string", "count_text": "int", "amount": "double"}}, "ignoreProperties": {"Reading": ["extra", "memo"]}}"#
            let typed = try SyncHarness.config(
                settings, store: dir + "/typed", extra: extra, schema: schema, path: "/{owner}/readings",
                createSchema: false)
            _ = try await LoadHarness.load(typed)
            var values = typed
            values.realm.store = dir + "/values"
            try await Self.loadValuesOnly(values)

            let (a, b) = (try RealmStore(directory: typed.realm.store), try RealmStore(directory: values.realm.store))
            #expect(try a.realmPaths() == ["/u0/readings", "/u1/readings", "/u2/readings"])
            #expect(try a.realmPaths() == b.realmPaths())
            for path in try a.realmPaths() {
                #expect(
                    try a.objects(of: "Reading", in: path) == b.objects(of: "Reading", in: path), "objects in \(path)")
                #expect(
                    try a.history(of: path).map(\.instructions) == b.history(of: path).map(\.instructions),
                    "history of \(path)")
            }
            let three = try #require(try a.object(of: "Reading", identity: 3, in: "/u0/readings")).values
            #expect(
                three["label"] == "label 3" && three["note"] == .null && three["amount"] == .double(6)
                    && three["price"] == "3.375")
            #expect(
                three["kind"] == "k3" && three["small"] == 3 && three["count_text"] == 33 && three["extra"] == 7
                    && three["memo"] == .null)
            #expect(
                three["raw"] == .data(Data([0, 0, 3])) && three["ok"] == false
                    && three["day"] == .date(Timestamp(iso8601: "2026-01-04T00:00:00Z")!))
            #expect(
                three["at"] == .date(Timestamp(iso8601: "2026-01-01T00:00:04.5Z")!)
                    && three["ratio"] == .float(Float(3.0 / 7.0)))
            #expect(try a.object(of: "Reading", identity: 4, in: "/u1/readings")?.values["note"] == "ünïcødé 4")

            // A re-run merges: Realm-only properties keep what the app gave them.
            // (Written as the adapter's own, which the database need not receive: a load refuses to run over unsent changes.)
            try a.write(to: "/u0/readings", origin: "adapter:\(typed.realm.adapterName)") { tx in
                try tx.update("Reading", 3, ["memo": "kept", "extra": 8])
            }
            _ = try await pg.sql("UPDATE readings SET label = 'changed' WHERE id = 3")
            _ = try await LoadHarness.load(typed)
            let again = try #require(try a.object(of: "Reading", identity: 3, in: "/u0/readings")).values
            #expect(again["label"] == "changed" && again["memo"] == "kept" && again["extra"] == 8)

            _ = try await pg.sql("UPDATE readings SET ok = NULL WHERE id = 5")
            var third = typed
            third.realm.store = dir + "/third"
            let error = await #expect(throws: RealmAdapterError.self) { try await LoadHarness.load(third) }
            let message = error?.message ?? ""
            #expect(
                message.contains("Table readings, column ok, row with key 5") && message.contains("null"), "\(message)")
        }
    }

    /// Loads `config` as ``LoadHarness/load(_:only:)`` does, with rows handed over as values.
    static func loadValuesOnly(_ config: Configuration) async throws {
        let mapping = try Mapping(config)
        let store = try RealmStore(directory: config.realm.store)
        let adapter = try Adapter(
            store: store, name: config.realm.adapterName, pathRegex: config.realm.effectivePathRegex)
        let connector = PostgresConnector(
            configuration: config.database!, customTypes: config.mapping.customTypes, logger: Logger(label: "test.load")
        )
        let loader = Loader(
            store: store, mapping: mapping, adapter: adapter, source: connector.sourceName,
            configuration: config.loader, logger: Logger(label: "test.load"))
        let snapshot = ValuesOnlySnapshot(try await connector.loadSnapshot(mapping, partial: false))
        defer { try? snapshot.finish() }
        let plan = try LoadPlan(mapping, only: nil)
        _ = try await store.perform { try loader.load(snapshot, plan: plan) }
    }
}
