import ConnectorScenarios
import Foundation
import Logging
import PostgresConnector
import RealmAdapter
import ServiceLifecycle
import Testing

/// Polls `condition` until it holds or `timeout` passes.
func eventually(_ what: String, timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(25))
    }
    Issue.record("timed out waiting for: \(what)")
    throw CancellationError()
}

/// A running daemon (both directions) against a fresh database and store, for one test.
struct SyncHarness {
    let settings: PostgresSettings
    let config: Configuration
    let store: RealmStore
    let pg: PostgresConnection
    let mapping: Mapping

    static let busSchema = """
        [{"name": "Driver", "primaryKey": "id", "properties": {"id": "int", "name": "string?", "hired": "date?"}},
         {"name": "Bus", "primaryKey": "vehicle", "properties": {
            "vehicle": "int", "fleet_id": "string?", "seats": {"type": "int", "default": 40}, "driver": "Driver",
            "price": "decimal?", "tags": "string[]", "photo": "data?", "note": "string?"}}]
        """

    static func config(
        _ settings: PostgresSettings, store: String, extra: String = "", schema: String = busSchema,
        path: String = "/SQLDemo",
        createSchema: Bool = true
    ) throws -> Configuration {
        try Configuration(
            json: try JSONValue(
                parsing: """
                    {"realm": {"store": "\(store)", "path": "\(path)", "adapterName": "pg"},
                     "database": {"type": "postgres", "host": "\(settings.host!)", "port": \(settings.port!), "user": "\(settings.user!)",
                                  "database": "\(settings.database!)", "createSchema": \(createSchema), "slotName": "\(settings.database!)", "retry": {"attempts": 0, "delayMs": 50, "maxDelayMs": 500}},
                     "schema": \(schema) \(extra)}
                    """), environment: [:], connectors: .postgres)
    }

    /// Runs `body` with the daemon running; stops it gracefully afterwards.
    /// - Parameters:
    ///   - setup: SQL run before the daemon starts (tables made by hand).
    ///   - before: run before the daemon starts (a backlog written to the Realms).
    static func run(
        _ name: String = #function, extra: String = "", schema: String = busSchema, path: String = "/SQLDemo",
        applyRealmSchemaChanges: Bool = false, setup: String = "", largeTransactionChanges: Int? = nil,
        before: (SyncHarness) throws -> Void = { _ in }, _ body: (SyncHarness) async throws -> Void
    ) async throws {
        try await TestServer.withFreshDatabase(name) { settings in
            if !setup.isEmpty {
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                _ = try await pg.sql(setup)
            }
            let dir = NSTemporaryDirectory() + "realm-adapter-sync-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var config = try config(settings, store: dir, extra: extra, schema: schema, path: path)
            config.database!.applyRealmSchemaChanges = applyRealmSchemaChanges
            if let largeTransactionChanges { config.database!.largeTransactionChanges = largeTransactionChanges }
            let h = SyncHarness(
                settings: settings, config: config, store: try RealmStore(directory: dir),
                pg: try await PostgresConnection.connect(settings), mapping: try Mapping(config))
            defer { h.pg.close() }
            try before(h)
            try await h.withDaemon { try await body(h) }
        }
    }

    func withDaemon(_ body: () async throws -> Void) async throws {
        var logger = Logger(label: "test.daemon")
        logger.logLevel = ProcessInfo.processInfo.environment["REALM_ADAPTER_TEST_DEBUG"] != nil ? .debug : .warning
        let connector = PostgresConnector(configuration: config.database!, logger: logger)
        try await connector.prepare(mapping)
        try await InProcessDaemon.run(
            connector, configuration: config, mapping: mapping, store: store, logger: logger, body)
    }

    /// The object, or nil (also while the Realm does not exist yet).
    func object(_ type: String, _ identity: Value, in path: String = "/SQLDemo") throws -> RealmObject? {
        guard try store.contains(path) else { return nil }
        return try store.object(of: type, identity: identity, in: path)
    }

    func sql(_ text: String, _ params: [String?] = []) async throws -> [[String?]] {
        try await pg.session { s in try s.query(text, params).rows }
    }
}

extension PostgresIntegration {
    @Suite struct SyncTests {
        @Test(.timeLimit(.minutes(2)))
        func changesFlowBothWaysOnceAndNeverBack() async throws {
            try await SyncHarness.run { h in
                // Database → Realm.
                _ = try await h.sql(
                    "INSERT INTO \"Driver\" (id, name, hired) VALUES (1, 'Ann', '2020-01-02 03:04:05.5+00')")
                _ = try await h.sql(
                    "INSERT INTO \"Bus\" (vehicle, fleet_id, seats, driver, price, tags, photo) VALUES (7, 'F-7', 50, 1, 12.30, '{city,\"night line\"}', '\\x0102')"
                )
                try await eventually("bus 7 in the Realm") { try h.object("Bus", 7) != nil }
                let bus = try #require(try h.store.object(of: "Bus", identity: 7, in: "/SQLDemo"))
                #expect(bus.values["fleet_id"] == "F-7")
                #expect(bus.values["seats"] == 50)
                #expect(bus.values["driver"] == 1)
                #expect(bus.values["price"] == .decimal("12.30"))  // the scale as written
                #expect(bus.values["tags"] == ["city", "night line"])
                #expect(bus.values["photo"] == .data(Data([1, 2])))
                #expect(
                    try h.store.object(of: "Driver", identity: 1, in: "/SQLDemo")?.values["hired"]
                        == .date(Timestamp(iso8601: "2020-01-02T03:04:05.5Z")!))

                // Realm → database.
                try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.create("Bus", ["vehicle": 8, "fleet_id": "F-8", "driver": 1, "tags": ["new"]])
                    try tx.update("Bus", 7, ["fleet_id": "F-7b"])
                    try tx.listAppend("Bus", 7, "tags", "express")
                }
                try await eventually("bus 8 in the database") {
                    try await h.sql("SELECT fleet_id FROM \"Bus\" WHERE vehicle = 8") == [["F-8"]]
                }
                try await eventually("bus 7 updated in the database") {
                    try await h.sql("SELECT fleet_id, tags::text FROM \"Bus\" WHERE vehicle = 7") == [
                        ["F-7b", "{city,\"night line\",express}"]
                    ]
                }
                #expect(try await h.sql("SELECT seats, driver FROM \"Bus\" WHERE vehicle = 8") == [["40", "1"]])

                // Nothing travels back: the Realm got no new transaction from our own database writes.
                let version = try h.store.version(of: "/SQLDemo")
                // a later change, to know the stream went past ours
                _ = try await h.sql("INSERT INTO \"Driver\" (id) VALUES (2)")
                try await eventually("driver 2 in the Realm") {
                    try h.store.object(of: "Driver", identity: 2, in: "/SQLDemo") != nil
                }
                #expect(try h.store.version(of: "/SQLDemo") == version + 1)
                let history = try h.store.history(of: "/SQLDemo").map {
                    "\($0.version) \($0.origin) \($0.instructions.map { $0.json().serialized() })"
                }
                #expect(
                    try await h.sql("SELECT path, version FROM realm_adapter_state WHERE adapter = 'pg'") == [
                        ["/SQLDemo", String(version)]
                    ],
                    "\(history)")

                // Deletes and updates both ways.
                _ = try await h.sql("UPDATE \"Bus\" SET note = 'checked' WHERE vehicle = 8")
                try await eventually("note on bus 8") {
                    try h.store.object(of: "Bus", identity: 8, in: "/SQLDemo")?.values["note"] == "checked"
                }
                _ = try await h.sql("DELETE FROM \"Bus\" WHERE vehicle = 8")
                try await eventually("bus 8 gone from the Realm") {
                    try h.store.object(of: "Bus", identity: 8, in: "/SQLDemo") == nil
                }
                try h.store.write(to: "/SQLDemo", origin: "app") { tx in try tx.delete("Bus", 7) }
                try await eventually("bus 7 gone from the database") {
                    try await h.sql("SELECT count(*) FROM \"Bus\"") == [["0"]]
                }
            }
        }

        @Test func schemaMismatchesAreListed() async throws {
            try await TestServer.withFreshDatabase { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                try await pg.session { s in
                    try s.execute(
                        """
                        CREATE TABLE "Driver" (id int PRIMARY KEY, name int);
                        CREATE TYPE mood AS ENUM ('happy', 'sad');
                        CREATE TABLE "Bus" (vehicle int PRIMARY KEY, fleet_id mood)
                        """)
                }
                var c = try SyncHarness.config(settings, store: "/tmp/unused")
                c.database!.createSchema = false
                let connector = PostgresConnector(configuration: c.database!, logger: Logger(label: "test"))
                await #expect {
                    try await connector.prepare(try Mapping(c))
                } throws: { error in
                    let text = "\(error)"
                    return text.contains("column Driver.name is integer, which cannot hold Driver.name (string?)")
                        && text.contains("column Driver.hired (for Driver.hired) does not exist")
                        && text.contains(
                            "column Bus.fleet_id has a type realm-adapter does not know; map it in mapping.customTypes")
                        && text.contains("column Bus.seats (for Bus.seats) does not exist")
                }
            }
        }
    }
}

extension PostgresIntegration.SyncTests {
    static let routeSchema = """
        [{"name": "Stop", "primaryKey": "id", "properties": {"id": "int", "name": "string"}},
         {"name": "Route", "primaryKey": "id", "properties": {"id": "string", "stops": "Stop[]"}}]
        """

    /// Ordered lists of links travel both ways through a link table (oid, idx, target).
    @Test(.timeLimit(.minutes(1)))
    func listsOfLinksSyncBothWaysThroughALinkTable() async throws {
        try await SyncHarness.run(schema: Self.routeSchema) { h in
            func linkRows() async throws -> [[String?]] {
                try await h.sql("SELECT oid, idx, target FROM \"Route_stops\" ORDER BY oid, idx")
            }
            // Realm → database: the list becomes rows in order.
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                if tx.schema[type: "Stop"] == nil {
                    try tx.addType(h.config.schema[type: "Stop"]!)
                    try tx.addType(h.config.schema[type: "Route"]!)
                }
                for (i, n) in ["Depot", "Mill", "Quay", "Park"].enumerated() {
                    try tx.create("Stop", ["id": .int(Int64(i + 1)), "name": .string(n)])
                }
                try tx.create("Route", ["id": "R1", "stops": [1, 2, 3]])
            }
            try await eventually("R1's stops in the link table") {
                try await linkRows() == [["R1", "0", "1"], ["R1", "1", "2"], ["R1", "2", "3"]]
            }
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.listSet("Route", "R1", "stops", at: 0, 3)
                try tx.listErase("Route", "R1", "stops", at: 2)
                try tx.listInsert("Route", "R1", "stops", at: 1, 4)
            }
            try await eventually("the edited list in the link table") {
                try await linkRows() == [["R1", "0", "3"], ["R1", "1", "4"], ["R1", "2", "2"]]
            }

            // Database → Realm: rows added, moved and removed edit the list in place.
            _ = try await h.sql("INSERT INTO \"Route_stops\" VALUES ('R1', 3, 1)")
            try await eventually("stop 1 appended in the Realm") {
                try h.store.list("stops", of: "Route", identity: "R1", in: "/SQLDemo") == [3, 4, 2, 1]
            }
            _ = try await h.sql("DELETE FROM \"Route_stops\" WHERE oid = 'R1' AND idx = 0")
            try await eventually("the first stop removed in the Realm") {
                try h.store.list("stops", of: "Route", identity: "R1", in: "/SQLDemo") == [4, 2, 1]
            }
            _ = try await h.sql("UPDATE \"Route_stops\" SET target = 3 WHERE oid = 'R1' AND idx = 2")
            try await eventually("a stop replaced in the Realm") {
                try h.store.list("stops", of: "Route", identity: "R1", in: "/SQLDemo") == [4, 3, 1]
            }

            // A stop deleted in the Realm leaves every list, and the database closes the gap.
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in try tx.delete("Stop", 3) }
            try await eventually("stop 3 out of the link table, indexes contiguous") {
                try await linkRows() == [["R1", "0", "4"], ["R1", "1", "1"]]
            }
            #expect(try h.store.list("stops", of: "Route", identity: "R1", in: "/SQLDemo") == [4, 1])
        }
    }
}

extension PostgresIntegration.SyncTests {
    static let joinSchema = """
        [{"name": "Employee", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}},
         {"name": "Route", "primaryKey": "id", "properties": {"id": "int"}},
         {"name": "EmployeeRoute", "primaryKey": "id", "properties": {"id": "string", "employee": "Employee", "route": "Route", "since": "date?"}}]
        """
    static let joinMapping = """
        , "mapping": {"compoundPrimaryKeys": {"EmployeeRoute": [
            {"property": "employee", "dbColumn": "employee_id", "type": "int"}, {"property": "route", "dbColumn": "route_id", "type": "int"}]}}
        """

    /// A join table with a compound primary key ⇄ join objects keyed "a-b" (legacy compoundPrimaryKeys).
    @Test(.timeLimit(.minutes(1)))
    func joinTablesWithCompoundKeysSyncBothWays() async throws {
        try await SyncHarness.run(extra: Self.joinMapping, schema: Self.joinSchema) { h in
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                for t in h.config.schema.types where tx.schema[type: t.name] == nil { try tx.addType(t) }
                for i in 1...2 {
                    try tx.create("Employee", ["id": .int(Int64(i))])
                    try tx.create("Route", ["id": .int(Int64(i))])
                }
                try tx.create("EmployeeRoute", ["id": "1-2", "employee": 1, "route": 2])
            }
            try await eventually("join row (1, 2) in the database") {
                try await h.sql(#"SELECT employee_id, route_id FROM "EmployeeRoute""#) == [["1", "2"]]
            }
            _ = try await h.sql(
                #"INSERT INTO "EmployeeRoute" (employee_id, route_id, since) VALUES (2, 1, '2024-01-01')"#)
            try await eventually("join object 2-1 in the Realm") { try h.object("EmployeeRoute", "2-1") != nil }
            let joined = try #require(try h.object("EmployeeRoute", "2-1"))
            #expect(joined.values["employee"] == 2 && joined.values["route"] == 1)
            _ = try await h.sql(#"DELETE FROM "EmployeeRoute" WHERE employee_id = 1 AND route_id = 2"#)
            try await eventually("join object 1-2 gone from the Realm") { try h.object("EmployeeRoute", "1-2") == nil }
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in try tx.delete("EmployeeRoute", "2-1") }
            try await eventually("join row (2, 1) gone from the database") {
                try await h.sql(#"SELECT count(*) FROM "EmployeeRoute""#) == [["0"]]
            }
        }
    }
}

extension PostgresIntegration.SyncTests {
    static let joinListSchema = """
        [{"name": "Employee", "primaryKey": "id", "properties": {"id": "int"}},
         {"name": "Route", "primaryKey": "id", "properties": {"id": "int"}},
         {"name": "Stop", "primaryKey": "id", "properties": {"id": "int"}},
         {"name": "EmployeeRoute", "primaryKey": "id", "properties": {"id": "string", "employee": "Employee", "route": "Route", "stops": "Stop[]"}}]
        """

    /// A join object's list of links: its link table names it by the string key ("1-2"), both
    /// ways, and the loader reads it too.
    @Test(.timeLimit(.minutes(1)))
    func listsOfLinksOnJoinObjectsSyncBothWaysAndLoad() async throws {
        try await SyncHarness.run(extra: Self.joinMapping, schema: Self.joinListSchema) { h in
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                for t in h.config.schema.types where tx.schema[type: t.name] == nil { try tx.addType(t) }
                try tx.create("Employee", ["id": 1])
                try tx.create("Route", ["id": 2])
                for i in 1...3 { try tx.create("Stop", ["id": .int(Int64(i))]) }
                try tx.create("EmployeeRoute", ["id": "1-2", "employee": 1, "route": 2, "stops": [3, 1]])
            }
            func linkRows() async throws -> [[String?]] {
                try await h.sql(#"SELECT oid, idx, target FROM "EmployeeRoute_stops" ORDER BY idx"#)
            }
            try await eventually("the list's rows in the database") {
                try await linkRows() == [["1-2", "0", "3"], ["1-2", "1", "1"]]
            }
            _ = try await h.sql(#"INSERT INTO "EmployeeRoute_stops" VALUES ('1-2', 2, 2)"#)
            try await eventually("the database's row in the Realm's list") {
                try h.object("EmployeeRoute", "1-2")?.values["stops"] == [3, 1, 2]
            }

            // The loader reads the same list from the database.
            let dir = NSTemporaryDirectory() + "realm-adapter-joinlist-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var config = h.config
            config.realm.store = dir
            config.database!.postgres.slotName = h.settings.database! + "_load"
            _ = try await LoadHarness.load(config)
            #expect(
                try RealmStore(directory: dir).object(of: "EmployeeRoute", identity: "1-2", in: "/SQLDemo")?.values[
                    "stops"] == [3, 1, 2])
            _ = try await h.sql("SELECT pg_drop_replication_slot($1)", [config.database!.postgres.slotName])

            try h.store.write(to: "/SQLDemo", origin: "app") { tx in try tx.delete("EmployeeRoute", "1-2") }
            try await eventually("the join row and its list gone from the database") {
                guard try await linkRows().isEmpty else { return false }
                return try await h.sql(#"SELECT count(*) FROM "EmployeeRoute""#) == [["0"]]
            }
        }
    }
}

extension PostgresIntegration.SyncTests {
    /// CLEAR in a Realm empties the table; TRUNCATE in the database empties the type.
    @Test(.timeLimit(.minutes(1)))
    func clearAndTruncateEmptyTheOtherSide() async throws {
        try await SyncHarness.run { h in
            _ = try await h.sql(#"INSERT INTO "Driver" (id) VALUES (1), (2)"#)
            try await eventually("both drivers in the Realm") { try h.object("Driver", 2) != nil }
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in try tx.deleteAll("Driver") }
            try await eventually("the driver table empty") {
                try await h.sql(#"SELECT count(*) FROM "Driver""#) == [["0"]]
            }
            _ = try await h.sql(#"INSERT INTO "Driver" (id) VALUES (3)"#)
            try await eventually("driver 3 in the Realm") { try h.object("Driver", 3) != nil }
            _ = try await h.sql(#"TRUNCATE "Driver" CASCADE"#)
            try await eventually("no drivers left in the Realm") {
                try h.store.count(of: "Driver", in: "/SQLDemo") == 0
            }
        }
    }
}

extension PostgresIntegration.SyncTests {
    /// `database.applyRealmSchemaChanges`: a property and a type that an app adds to the Realm
    /// become a column and a table, and sync both ways from then on.
    @Test(.timeLimit(.minutes(1)))
    func realmSchemaChangesBecomeColumnsAndTables() async throws {
        try await SyncHarness.run(applyRealmSchemaChanges: true) { h in
            _ = try await h.sql(#"INSERT INTO "Driver" (id, name) VALUES (1, 'Ann')"#)
            try await eventually("driver 1 in the Realm") { try h.object("Driver", 1) != nil }

            // A new property, set in the same transaction.
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.addProperties([Property(name: "rating", type: .scalar(.int), isOptional: true)], to: "Driver")
                try tx.update("Driver", 1, ["rating": 5])
            }
            try await eventually("the rating column with the value") {
                (try? await h.sql(#"SELECT rating FROM "Driver" WHERE id = 1"#)) == [["5"]]
            }
            _ = try await h.sql(#"UPDATE "Driver" SET rating = 7 WHERE id = 1"#)
            try await eventually("the database's rating in the Realm") {
                try h.object("Driver", 1)?.values["rating"] == 7
            }

            // A new type, with a link to a configured one.
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.addType(
                    ObjectSchema(
                        name: "Note", primaryKey: "id",
                        properties: [
                            Property(name: "id", type: .scalar(.int)),
                            Property(name: "text", type: .scalar(.string), isOptional: true),
                            Property(name: "driver", type: .link("Driver"), isOptional: true),
                        ]))
                try tx.create("Note", ["id": 1, "text": "hello", "driver": 1])
            }
            try await eventually("the Note table with the row") {
                (try? await h.sql(#"SELECT id, text, driver FROM "Note""#)) == [["1", "hello", "1"]]
            }
            _ = try await h.sql(#"INSERT INTO "Note" (id, text) VALUES (2, 'from the database')"#)
            try await eventually("note 2 in the Realm") {
                try h.object("Note", 2)?.values["text"] == "from the database"
            }
        }
    }

    /// A backlog of several of the daemon's batches (200 Realm transactions each) is read and
    /// mapped a batch ahead while the one before is sent. A trigger logs every row the database
    /// writes: each Realm transaction must reach it once and in order, across runs of inserts
    /// sent as `COPY`, a schema change met while reading ahead, and updates.
    @Test(.timeLimit(.minutes(1)))
    func aBacklogOfManyBatchesReachesTheDatabaseOnceAndInOrder() async throws {
        let schema = #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}}]"#
        let setup = """
            CREATE TABLE "Item" (id int8 PRIMARY KEY, name text);
            CREATE TABLE seen (seq serial PRIMARY KEY, id int8, name text);
            CREATE FUNCTION note() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN INSERT INTO seen (id, name) VALUES (NEW.id, NEW.name); RETURN NEW; END $$;
            CREATE TRIGGER note AFTER INSERT OR UPDATE ON "Item" FOR EACH ROW EXECUTE FUNCTION note();
            """
        let (inserts, updates) = (500, 200)
        var expected: [[String?]] = []
        try await SyncHarness.run(schema: schema, applyRealmSchemaChanges: true, setup: setup) { h in
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.addType(h.config.schema[type: "Item"]!)
            }
            for i in 0..<inserts {
                try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                    _ = try tx.create("Item", ["id": .int(Int64(i)), "name": .string("i\(i)")])
                }
                expected.append(["\(i)", "i\(i)"])
            }
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.addProperties([Property(name: "rating", type: .scalar(.int), isOptional: true)], to: "Item")
                try tx.update("Item", 0, ["rating": 5])
            }
            expected.append(["0", "i0"])
            for i in 0..<updates {
                try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                    try tx.update("Item", .int(Int64(i)), ["name": .string("u\(i)")])
                }
                expected.append(["\(i)", "u\(i)"])
            }
        } _: { h in
            try await eventually("the last update in the database") {
                (try? await h.sql(#"SELECT name FROM "Item" WHERE id = \#(updates - 1)"#)) == [["u\(updates - 1)"]]
            }
            #expect(try await h.sql("SELECT id, name FROM seen ORDER BY seq") == expected)
            #expect(try await h.sql(#"SELECT rating FROM "Item" WHERE id = 0"#) == [["5"]])
        }
    }

    /// An object deleted and created again in one Realm transaction stays in the Realm and in the
    /// database: the daemon writes nothing back into the Realm (a probe found it wrote the DELETE
    /// alone back, so the object left the Realm while its row stayed in the database).
    @Test(.timeLimit(.minutes(1)))
    func anObjectDeletedAndCreatedAgainInOneTransactionStays() async throws {
        try await SyncHarness.run { h in
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                for type in ["Driver", "Bus"] { try tx.addType(h.config.schema[type: type]!) }
                for id in 1...3 { _ = try tx.create("Driver", ["id": .int(Int64(id)), "name": "first"]) }
            }
            try await eventually("three drivers in the database") {
                (try? await h.sql(#"SELECT count(*) FROM "Driver""#)) == [["3"]]
            }
            let version = try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.delete("Driver", 2)
                _ = try tx.create("Driver", ["id": 2, "name": "again"])
            }.version
            try await eventually("driver 2 renamed in the database") {
                (try? await h.sql(#"SELECT name FROM "Driver" WHERE id = 2"#)) == [["again"]]
            }
            // The daemon's own writes come back through the stream; give them time to arrive.
            try await Task.sleep(for: .milliseconds(500))
            #expect(try h.object("Driver", 2)?.values["name"] == "again")
            #expect(try h.store.history(of: "/SQLDemo", after: version).map(\.instructions) == [])
        }
    }

    /// `createSchema` makes a text column for an ObjectId property (Postgres has no ObjectId
    /// type); the daemon then starts on the table it made, and ObjectIds travel both ways (a
    /// probe found it refused to start: "column Doc.ref is text, which cannot hold Doc.ref").
    @Test(.timeLimit(.minutes(1)))
    func objectIdPropertiesGetColumnsTheDaemonAccepts() async throws {
        let schema =
            #"[{"name": "Doc", "primaryKey": "id", "#
            + #""properties": {"id": "int", "ref": "objectId?", "refs": "objectId[]"}}]"#
        let (a, b) = (ObjectId("5f1b2c3d4e5f60718293a4b5")!, ObjectId("0123456789abcdef01234567")!)
        try await SyncHarness.run(schema: schema) { h in
            try h.store.write(to: "/SQLDemo", origin: "app") { tx in
                try tx.addType(h.config.schema[type: "Doc"]!)
                _ = try tx.create("Doc", ["id": 1, "ref": .objectId(a), "refs": .list([.objectId(a), .objectId(b)])])
            }
            try await eventually("doc 1 in the database") {
                (try? await h.sql(#"SELECT ref, refs::text FROM "Doc" WHERE id = 1"#))
                    == [["5f1b2c3d4e5f60718293a4b5", "{5f1b2c3d4e5f60718293a4b5,0123456789abcdef01234567}"]]
            }
            _ = try await h.sql(#"INSERT INTO "Doc" (id, ref, refs) VALUES (2, '0123456789abcdef01234567', '{}')"#)
            try await eventually("doc 2 in the Realm") { try h.object("Doc", 2)?.values["ref"] == .objectId(b) }
        }
    }
}
