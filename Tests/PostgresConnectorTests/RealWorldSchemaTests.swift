import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// Schemas as public sample databases have them: domains, enums, arrays of enums.
    @Suite struct RealWorldSchemaTests {
        static let ddl = """
            CREATE DOMAIN year AS integer CHECK (VALUE > 1800);
            CREATE DOMAIN label AS text;
            CREATE DOMAIN price AS numeric(10,2);
            CREATE TYPE mood AS ENUM ('calm', 'busy');
            CREATE TABLE film (id integer PRIMARY KEY, released year, title label, cost price, mood mood, moods mood[]);
            """
        static let schema = """
            [{"name": "film", "primaryKey": "id", "properties": {
                "id": "int", "released": "int?", "title": "string?", "cost": "decimal?", "mood": "string?", "moods": "string[]"}}]
            """

        /// Loader and daemon resolve a column's type the same way: a domain by its name in
        /// `customTypes`, else as its base type; enums and arrays of enums through `customTypes`.
        /// (The stream names a domain's base type with the domain's OID: it used to stop the
        /// daemon with "expected int?, found string".)
        @Test(.timeLimit(.minutes(1)))
        func domainsAndEnumsResolveTheSameWayInTheLoaderAndTheStream() async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                _ = try await pg.sql(
                    Self.ddl + #"INSERT INTO film VALUES (1, 1999, 'Matrix', 12.50, 'calm', '{calm,busy}');"#)
                let (dir, config) = try DaemonProcess.workspace(settings, schema: Self.schema)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                try DaemonProcess.edit(
                    config, replacing: #""schema":"#,
                    with: #""mapping": {"customTypes": {"year": "int", "mood": "string"}}, "schema":"#)
                let load = try await ChildProcess.run(
                    ChildProcess.built("realm-adapter"), ["load", "--config", config])
                #expect(load.status == 0, "\(load.stderr)")
                let daemon = try DaemonProcess(config: config, log: dir + "/daemon.log")
                try await daemon.waitUntilSyncing()
                _ = try await pg.sql(#"INSERT INTO film VALUES (2, 2003, 'Reloaded', 9.99, 'busy', '{busy}')"#)
                let store = try RealmStore(directory: dir + "/store")
                try await eventually("film 2 in the Realm") {
                    try store.object(of: "film", identity: 2, in: "/SQLDemo") != nil
                }
                let one = try #require(try store.object(of: "film", identity: 1, in: "/SQLDemo"))
                let two = try #require(try store.object(of: "film", identity: 2, in: "/SQLDemo"))
                #expect(one.values["released"] == 1999 && two.values["released"] == 2003)
                #expect(one.values["title"] == "Matrix" && two.values["title"] == "Reloaded")
                // A decimal keeps its scale both ways (12.50 stays 12.50), and a Realm value Postgres
                // stores at its column's scale (3.5 in numeric(10,2)) comes back as Postgres stored it.
                #expect(one.values["cost"]?.description == "12.50" && two.values["cost"]?.description == "9.99")
                try store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.update(
                        "film", 2,
                        [
                            "cost": try Value.string("3.5").coerced(
                                to: Property(name: "cost", type: .scalar(.decimal)), in: .empty)
                        ])
                }
                try await eventually("3.50 in the database and back in the Realm") {
                    try await pg.sql("SELECT cost::text FROM film WHERE id = 2") == [["3.50"]]
                        && store.object(of: "film", identity: 2, in: "/SQLDemo")?.values["cost"]?.description == "3.50"
                }
                #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
                #expect(one.values["mood"] == "calm" && two.values["mood"] == "busy")
                #expect(one.values["moods"] == ["calm", "busy"] && two.values["moods"] == ["busy"])
            }
        }
    }
}

extension PostgresIntegration.RealWorldSchemaTests {
    /// A fresh database and a daemon syncing `GuaranteeWorkload.schema` with
    /// applyRealmSchemaChanges, its log `daemon.log` in `dir`.
    static func withSchemaChangingDaemon(
        name: String = #function, _ body: (PostgresSettings, _ dir: String, DaemonProcess) async throws -> Void
    ) async throws {
        try await TestServer.withFreshDatabase(name) { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: GuaranteeWorkload.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try DaemonProcess.edit(
                config, replacing: #""createSchema": true"#,
                with: #""createSchema": true, "applyRealmSchemaChanges": true"#)
            let daemon = try DaemonProcess(config: config, log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            try await body(settings, dir, daemon)
        }
    }

    /// With applyRealmSchemaChanges, property names Postgres would cut to 63 bytes are refused
    /// before any DDL, naming each: two such names would otherwise become one column.
    @Test(.timeLimit(.minutes(1)))
    func namesLongerThanPostgresKeepsAreRefusedBeforeAnyDDL() async throws {
        try await Self.withSchemaChangingDaemon { settings, dir, daemon in
            let long = String(repeating: "measurement_", count: 6)  // 72 bytes
            let store = try RealmStore(directory: dir + "/store")
            try store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.addType(
                    ObjectSchema(
                        name: "Note", primaryKey: "id",
                        properties: [
                            Property(name: "id", type: .scalar(.int)),
                            Property(name: long + "min", type: .scalar(.double), isOptional: true),
                            Property(name: long + "max", type: .scalar(.double), isOptional: true),
                        ]))
            }
            #expect(await daemon.process.wait() == 1)
            let log = try String(contentsOfFile: daemon.log, encoding: .utf8)
            #expect(
                log.contains("cuts names to 63 bytes") && log.contains("Note.\(long)min")
                    && log.contains("Note.\(long)max"), "\(log.suffix(2000))")
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            #expect(try await pg.sql(#"SELECT to_regclass('"Note"') IS NULL"#) == [["t"]], "nothing created")
        }
    }
}

extension PostgresIntegration.RealWorldSchemaTests {
    /// A partitioned table syncs like any other: init maps the parent (not the partitions), its
    /// key is the id while writes match the real key (id, taken_on) that Postgres requires of a
    /// partitioned table, and changes arrive under the parent's name (the publication publishes
    /// through the partition root), both ways.
    @Test(.timeLimit(.minutes(1)))
    func aPartitionedTableSyncsLikeAnyOther() async throws {
        try await TestServer.withFreshDatabase { settings in
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            _ = try await pg.sql(
                """
                CREATE TABLE reading (id integer NOT NULL, taken_on date NOT NULL, value integer, PRIMARY KEY (id, taken_on))
                    PARTITION BY RANGE (taken_on);
                CREATE TABLE reading_2024 PARTITION OF reading FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
                CREATE TABLE reading_2025 PARTITION OF reading FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
                INSERT INTO reading VALUES (1, '2024-03-01', 10);
                """)
            let dir = NSTemporaryDirectory() + "realm-adapter-partitions-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cli = ChildProcess.built("realm-adapter")
            let url = "postgresql://\(settings.user!)@\(settings.host!):\(settings.port!)/\(settings.database!)"
            let initialized = try await ChildProcess.run(cli, ["init", "--database", url, "-o", dir + "/adapter.json"])
            #expect(initialized.status == 0, "\(initialized.stderr)")
            #expect(
                !initialized.stderr.contains("reading_2024") && !initialized.stderr.contains("reading_2025"),
                "\(initialized.stderr)")
            var config = try Configuration.load(file: dir + "/adapter.json", environment: [:], connectors: .postgres)
            #expect(config.schema[type: "reading"]?.primaryKey == "id")
            #expect(config.schema[type: "reading_2024"] == nil)
            try DaemonProcess.edit(
                dir + "/adapter.json", replacing: #""store": "./realms""#, with: #""store": "\#(dir)/store""#)
            config = try Configuration.load(file: dir + "/adapter.json", environment: [:], connectors: .postgres)

            let load = try await ChildProcess.run(cli, ["load", "--config", dir + "/adapter.json"])
            #expect(load.status == 0, "\(load.stderr)")
            let daemon = try DaemonProcess(config: dir + "/adapter.json", log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            let store = try RealmStore(directory: config.realm.store)
            let path = config.realm.path.template
            _ = try await pg.sql("INSERT INTO reading VALUES (2, '2025-06-01', 20)")
            try await eventually("row 2, written to a partition, in the Realm") {
                try store.object(of: "reading", identity: 2, in: path) != nil
            }
            try store.write(to: path, origin: "app") { tx in
                try tx.create("reading", ["id": 3, "taken_on": .date(Timestamp(iso8601: "2024-07-01")!), "value": 30])
                try tx.update("reading", 1, ["value": 11])
                try tx.delete("reading", 2)
            }
            try await eventually("the Realm's writes in the database") {
                try await pg.sql("SELECT id, value FROM reading ORDER BY id") == [["1", "11"], ["3", "30"]]
            }
            // A table the mapping does not know, put in the publication by hand: said once, not dropped silently.
            _ = try await pg.sql(
                "CREATE TABLE other (id int PRIMARY KEY); ALTER PUBLICATION \(config.database!.postgres.publication) ADD TABLE other"
            )
            _ = try await pg.sql(
                "INSERT INTO other VALUES (1); INSERT INTO other VALUES (2); INSERT INTO reading VALUES (4, '2024-01-02', 40)"
            )
            try await eventually("row 4 in the Realm") { try store.object(of: "reading", identity: 4, in: path) != nil }
            #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            let warnings = try String(contentsOfFile: daemon.log, encoding: .utf8).split(separator: "\n")
                .filter { $0.contains("a table the mapping does not know") && $0.contains("db.table=other") }
            #expect(warnings.count == 1 && warnings.allSatisfy { $0.contains("warning") }, "\(warnings)")
            #expect(try store.object(of: "reading", identity: 1, in: path)?.values["value"] == 11)
        }
    }
}

extension PostgresIntegration.RealWorldSchemaTests {
    /// Values the database sets itself come back to the Realm: a BEFORE trigger, a default, a
    /// generated column, a cascade. After the Realm's write, the Realm ends with what Postgres
    /// stored, and that change is not sent back (it is the database's own).
    @Test(.timeLimit(.minutes(1)))
    func valuesTheDatabaseSetsItselfReachTheRealm() async throws {
        try await TestServer.withFreshDatabase { settings in
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            _ = try await pg.sql(
                """
                CREATE TABLE doc (id integer PRIMARY KEY, title text, revision integer DEFAULT 1, origin text DEFAULT 'by default',
                                  slug text GENERATED ALWAYS AS (lower(title)) STORED);
                CREATE FUNCTION bump() RETURNS trigger AS $$ BEGIN NEW.revision := coalesce(OLD.revision, 0) + 1; RETURN NEW; END $$ LANGUAGE plpgsql;
                CREATE TRIGGER bump BEFORE UPDATE ON doc FOR EACH ROW EXECUTE FUNCTION bump();
                CREATE TABLE remark (id integer PRIMARY KEY, doc integer REFERENCES doc (id) ON DELETE CASCADE, text text);
                """)
            let schema = """
                [{"name": "doc", "primaryKey": "id", "properties": {"id": "int", "title": "string?", "revision": "int?", "origin": "string?", "slug": "string?"}},
                 {"name": "remark", "primaryKey": "id", "properties": {"id": "int", "doc": "doc", "text": "string?"}}]
                """
            let (dir, config) = try DaemonProcess.workspace(settings, schema: schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let daemon = try DaemonProcess(config: config, log: dir + "/daemon.log")
            try await daemon.waitUntilSyncing()
            let store = try RealmStore(directory: dir + "/store")
            func doc() throws -> RealmObject? { try store.object(of: "doc", identity: 1, in: "/SQLDemo") }
            try store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.adopt(try Schema(json: JSONValue(parsing: schema)))
                try tx.create("doc", ["id": 1, "title": "Hello"])
            }
            do {
                try await eventually("the default and the generated column in the Realm") {
                    try doc()?.values["origin"] == "by default" && doc()?.values["slug"] == "hello"
                        && doc()?.values["revision"] == 1
                }
            } catch {
                Issue.record(Comment(rawValue: "doc: \(String(describing: try doc()))\n" + crashReport(daemon.log)))
                throw error
            }
            try store.write(to: "/SQLDemo", origin: "app") { tx in try tx.update("doc", 1, ["title": "World"]) }
            try await eventually("the trigger's revision and the new slug in the Realm") {
                try doc()?.values["revision"] == 2 && doc()?.values["slug"] == "world"
            }
            // A remark from the database, then the Realm deletes its doc: the database cascades.
            _ = try await pg.sql("INSERT INTO remark VALUES (1, 1, 'nice')")
            try await eventually("the remark in the Realm") {
                try store.object(of: "remark", identity: 1, in: "/SQLDemo") != nil
            }
            try store.write(to: "/SQLDemo", origin: "app") { tx in try tx.delete("doc", 1) }
            try await eventually("the cascaded delete in the Realm") {
                try store.object(of: "remark", identity: 1, in: "/SQLDemo") == nil
            }
            #expect(try await pg.sql("SELECT count(*) FROM doc") == [["0"]])
            // None of it went back to the database: the trigger ran once per Realm update.
            #expect(await daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            let pending = try Adapter(store: store, name: "pg", pathRegex: "^/SQLDemo$").pendingCount("/SQLDemo")
            #expect(pending == 0)
        }
    }
}

extension PostgresIntegration.RealWorldSchemaTests {
    /// With applyRealmSchemaChanges, a property a Realm adds whose column exists already with a
    /// type that cannot hold it is refused, naming both, as the start-up check does. A probe found
    /// it logged as added, its values dead-lettered, and every later database update of the row
    /// set aside.
    @Test(.timeLimit(.minutes(1)))
    func anAddedPropertyWhoseColumnExistsWithAnotherTypeIsRefused() async throws {
        try await Self.withSchemaChangingDaemon { settings, dir, daemon in
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            _ = try await pg.sql(#"ALTER TABLE "Item" ADD COLUMN extra integer"#)
            let store = try RealmStore(directory: dir + "/store")
            try store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.adopt(Schema([GuaranteeWorkload.itemType]))
                try tx.addProperties([Property(name: "extra", type: .scalar(.string), isOptional: true)], to: "Item")
            }
            #expect(await daemon.process.wait() == 1)
            let log = try String(contentsOfFile: daemon.log, encoding: .utf8)
            #expect(
                log.contains("Item.extra") && !log.contains("Applied Realm schema changes"), "\(log.suffix(2000))")
        }
    }
}
