import Foundation
import GRDB
import PostgresConnector
import PostgresStore
import Testing

@testable import RealmAdapter

extension PostgresIntegration {
    /// `realm-adapter store copy` (issue 43): a store moved from a directory to a Postgres
    /// database and back is the same store, table by table and value by value.
    @Suite struct StoreCopyTests {
        /// Every table of a store that has one of each thing the store keeps goes to Postgres and
        /// back unchanged (SQLite's own files compared row by row), reads the same on Postgres,
        /// and the copy on Postgres takes new Realms, types, adapters and history after it.
        @Test(.timeLimit(.minutes(2)))
        func aStoreGoesToPostgresAndBackUnchanged() async throws {
            let dir = Self.scratch()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let original = try RealmStore(directory: dir + "/original")
            try Self.fill(original)
            try await TestServer.withFreshDatabase { settings in
                let backend = try PostgresBackend.open(settings, logger: .init(label: "copy"))
                defer { backend.close() }
                let onPostgres = RealmStore(backend: backend, location: "pg")
                let there = try original.copy(to: onPostgres)
                #expect(there.first { $0.table == "realm" }?.rows == 6)
                let back = try RealmStore(directory: dir + "/back")
                let returned = try onPostgres.copy(to: back)
                #expect(returned.map(\.table) == there.map(\.table))
                #expect(returned.map(\.rows) == there.map(\.rows))

                let (a, b) = (try Self.tables(dir + "/original"), try Self.tables(dir + "/back"))
                #expect(a.keys.sorted() == b.keys.sorted())
                for (name, rows) in a {
                    #expect(!rows.isEmpty, "the test leaves \(name) empty: fill it, so that its copy is checked")
                    #expect(rows == b[name], "table \(name) differs after the round trip")
                }
                for path in try original.realmPaths() {
                    for t in try original.schema(of: path).types {
                        let want = try original.objects(of: t.name, in: path)
                        #expect("\(try onPostgres.objects(of: t.name, in: path))" == "\(want)", "\(path) \(t.name)")
                    }
                    #expect(try onPostgres.version(of: path) == original.version(of: path))
                }

                // The copy goes on: its generated ids follow the copied rows.
                try onPostgres.write(to: "/shop", origin: "after") { tx in
                    try tx.addType(ObjectSchema(name: "Later", properties: [Property(name: "v", type: .scalar(.int))]))
                    try tx.create("Later", ["v": 1])
                }
                try onPostgres.write(to: "/new", origin: "after") { tx in
                    try tx.addType(Self.owner)
                    try tx.create("Owner", ["id": "x"])
                }
                _ = try Adapter(store: onPostgres, name: "another", pathRegex: ".*")
                #expect(try onPostgres.count(of: "Later", in: "/shop") == 1)
                #expect(
                    try onPostgres.history(of: "/shop", after: 0).count == original.history(of: "/shop", after: 0).count
                        + 1)
            }
        }

        /// A target that holds anything is refused, and so is a source a daemon runs on.
        @Test(.timeLimit(.minutes(1)))
        func aTargetThatIsNotEmptyAndASourceInUseAreRefused() async throws {
            let dir = Self.scratch()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let source = try RealmStore(directory: dir + "/source")
            try source.write(to: "/a", origin: "t") { tx in try tx.addType(Self.owner) }
            let used = try RealmStore(directory: dir + "/used")
            try used.write(to: "/b", origin: "t") { tx in try tx.addType(Self.owner) }
            #expect {
                try source.copy(to: used)
            } throws: { e in
                (e as? RealmAdapterError)?.message.contains("is not empty (its table realm_schema has rows)") == true
            }
            #expect(try used.realmPaths() == ["/b"])

            _ = try Adapter(store: source, name: "pg", pathRegex: ".*")
            var daemon: DaemonLock? = try DaemonLock(store: source, adapter: "pg")
            #expect {
                try source.lockedForCopy()
            } throws: { e in
                (e as? RealmAdapterError)?.message.contains("stop every `realm-adapter run`, `events` and `serve`")
                    == true
            }
            #expect(daemon != nil)
            daemon = nil
            #expect(try source.lockedForCopy().count == 1)
        }

        static func scratch() -> String { NSTemporaryDirectory() + "realm-adapter-copy-\(UUID().uuidString.prefix(8))" }

        static let owner = ObjectSchema(
            name: "Owner", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.string)),
                Property(name: "name", type: .scalar(.string), isOptional: true),
            ])

        /// A store with one of each thing: values at their edges, keys of every kind, links and
        /// lists, a type whose property has two kinds in two Realms, per-user Realms of one schema,
        /// an adapter recording changes with its cursor, source positions, metadata.
        static func fill(_ store: RealmStore) throws {
            let item = ObjectSchema(
                name: "Item", primaryKey: "id",
                properties: [
                    Property(name: "id", type: .scalar(.int)), Property(name: "d", type: .scalar(.double)),
                    Property(name: "f", type: .scalar(.float)), Property(name: "b", type: .scalar(.bool)),
                    Property(name: "s", type: .scalar(.string), isOptional: true, isIndexed: true),
                    Property(name: "data", type: .scalar(.data), isOptional: true),
                    Property(name: "date", type: .scalar(.date), isOptional: true),
                    Property(name: "dec", type: .scalar(.decimal), isOptional: true),
                    Property(name: "u", type: .scalar(.uuid), isOptional: true),
                    Property(name: "o", type: .scalar(.objectId), isOptional: true),
                    Property(name: "owner", type: .link("Owner")),
                    Property(name: "tags", type: .list(.scalar(.string))),
                    Property(name: "owners", type: .list(.link("Owner"))),
                ])
            let byUUID = ObjectSchema(
                name: "ByUUID", primaryKey: "id",
                properties: [Property(name: "id", type: .scalar(.uuid)), Property(name: "n", type: .scalar(.int))])
            let byObjectId = ObjectSchema(
                name: "ByObjectId", primaryKey: "id",
                properties: [Property(name: "id", type: .scalar(.objectId)), Property(name: "n", type: .scalar(.int))])
            let row = ObjectSchema(name: "Row", properties: [Property(name: "v", type: .scalar(.string))])
            let oid = ObjectId(bytes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255])!
            let adapter = try Adapter(store: store, name: "pg", pathRegex: "^/shop$", recordsChanges: true)
            try store.write(to: "/shop", origin: "load") { tx in
                for t in [owner, item, byUUID, byObjectId, row] { try tx.addType(t) }
                try tx.create("Owner", ["id": "ann", "name": "Ann \"quoted\" 'single' \u{1F600}"])
                try tx.create("Owner", ["id": "NaN", "name": ""])
                try tx.create(
                    "Item",
                    [
                        "id": .int(.min), "d": .double(.nan), "f": .float(-0.0), "b": true, "s": "",
                        "data": .data(Data([0, 255, 39])), "date": .date(Timestamp(seconds: -1, nanoseconds: 5)),
                        "dec": .decimal("-1234567890.0123456789"), "u": .uuid(UUID()), "o": .objectId(oid),
                        "owner": "ann", "tags": .list(["a", "", "c"]), "owners": .list(["ann", "NaN", "ann"]),
                    ])
                try tx.create("Item", ["id": .int(.max), "d": .double(-0.0), "f": .float(.infinity), "b": false])
                try tx.create(
                    "Item", ["id": 0, "d": .double(-.infinity), "f": .float(.nan), "b": false, "owner": "NaN"])
                try tx.create("ByUUID", ["id": .uuid(UUID()), "n": 1])
                try tx.create("ByObjectId", ["id": .objectId(oid), "n": 2])
                try tx.create("Row", ["v": "first"])
                try tx.create("Row", ["v": "second"])
            }
            try adapter.advance("/shop", through: 1)
            // Recorded for the adapter: objects before they change.
            try store.write(to: "/shop", origin: "app") { tx in
                try tx.update("Item", .int(0), ["d": .double(1.5)])
                try tx.delete("Owner", "NaN")
            }
            // The same type name with another kind of property: a column of each kind.
            try store.write(to: "/other", origin: "app") { tx in
                try tx.addType(
                    ObjectSchema(
                        name: "Item", primaryKey: "id",
                        properties: [
                            Property(name: "id", type: .scalar(.string)), Property(name: "d", type: .scalar(.string)),
                        ]
                    ))
                try tx.create("Item", ["id": "k", "d": "text"])
            }
            // Per-user Realms of one schema, and source positions of both kinds.
            for user in ["u1", "u2", "u3"] {
                try store.apply(
                    [
                        .addType(owner),
                        .insert(objectType: "Owner", identity: .string(user), values: ["id": .string(user)]),
                    ],
                    to: "/\(user)/tasks", origin: "pg",
                    sourcePosition: SourcePosition(source: "slot", position: "0/1\(user)"))
            }
            // More rows than a page (1,000) of a table, of a list and of string keys.
            try store.write(to: "/bulk", origin: "load") { tx in
                try tx.addType(owner)
                try tx.addType(row)
                try tx.addType(item)
                for i in 0..<1_200 { try tx.create("Owner", ["id": .string("o\(i)")]) }
                for i in 0..<1_100 { try tx.create("Row", ["v": .string("\(i)")]) }
                let tags = (0..<1_050).map { Value.string("t\($0)") }
                try tx.create("Item", ["id": 1, "d": 1, "f": 1, "b": true, "tags": .list(tags)])
            }
            try store.recordSourcePosition(SourcePosition(source: "old-slot", position: "0/FF"), in: ["/shop"])
            try store.setMetadata("blocked/pg//shop", #"{"error": "a value \u0000 it refused"}"#)
        }

        /// Every table of the SQLite store in `directory`, its rows in order.
        static func tables(_ directory: String) throws -> [String: [Row]] {
            let db = try DatabaseQueue(path: directory + "/realms.sqlite")
            return try db.read { db in
                var out: [String: [Row]] = [:]
                let names = try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                for name in names {
                    let width = try db.columns(in: name).count
                    let order = (1...width).map(String.init).joined(separator: ", ")
                    out[name] = try Row.fetchAll(db, sql: "SELECT * FROM \"\(name)\" ORDER BY \(order)")
                }
                return out
            }
        }
    }
}
