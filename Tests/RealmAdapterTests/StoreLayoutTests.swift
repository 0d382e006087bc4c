import Foundation
import GRDB
import Testing

@testable import RealmAdapter

/// The store lays objects out by type, shared by every Realm (``StoreLayout``): the number of
/// tables depends on the types, not on the Realms, and Realms never see each other's objects.
@Suite struct StoreLayoutTests {
    func tableCount(_ store: RealmStore) throws -> Int {
        try store.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'index')") ?? 0
        }
    }

    func fill(_ store: RealmStore, _ path: String, _ owner: String) throws {
        try store.write(to: path, origin: "t") { tx in
            for t in taskSchema { try tx.addType(t) }
            try tx.create("Person", ["id": .string(owner)])
            try tx.create(
                "Task",
                [
                    "id": 1, "title": .string("of \(owner)"), "owner": .string(owner),
                    "watchers": [.string(owner)], "tags": ["a", .string(owner)],
                ])
            try tx.create("Note", ["text": .string(owner)])
        }
    }

    @Test func theNumberOfTablesDoesNotGrowWithTheRealms() throws {
        let t = try TemporaryStore()
        try fill(t.store, "/u0/tasks", "u0")
        let afterOne = try tableCount(t.store)
        for i in 1..<200 { try fill(t.store, "/u\(i)/tasks", "u\(i)") }
        #expect(try tableCount(t.store) == afterOne)
        // Same keys in every Realm, each sees its own.
        for i in [0, 99, 199] {
            let task = try #require(try t.store.object(of: "Task", identity: 1, in: "/u\(i)/tasks"))
            #expect(task.values["title"] == .string("of u\(i)") && task.values["owner"] == .string("u\(i)"))
            #expect(try t.store.list("tags", of: "Task", identity: 1, in: "/u\(i)/tasks") == ["a", .string("u\(i)")])
            #expect(try t.store.count(of: "Note", in: "/u\(i)/tasks") == 1)
            #expect(try t.store.objects(of: "Person", in: "/u\(i)/tasks").map(\.identity) == [.string("u\(i)")])
        }
    }

    /// Realms with the same schema share its one stored copy; a Realm whose schema grows gets its
    /// own, and a failed schema change leaves no copy and no stale cache behind.
    @Test func realmsShareTheirSchemaText() throws {
        let t = try TemporaryStore()
        func copies() throws -> Int {
            try t.store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM realm_schema") ?? 0 }
        }
        for i in 0..<50 { try fill(t.store, "/u\(i)", "p") }
        #expect(try copies() == 1)
        let extra = Property(name: "extra", type: .scalar(.int), isOptional: true)
        try t.store.apply([.addProperties(objectType: "Note", properties: [extra])], to: "/u7", origin: "t")
        #expect(try copies() == 2)
        let bad = Instruction.insert(objectType: "Ghost", identity: 1, values: [:])
        // The second part reads the schema the first stored, then the whole is rolled back.
        #expect(throws: RealmAdapterError.self) {
            let other = ObjectSchema(name: "Other", primaryKey: nil, properties: [extra])
            try t.store.apply(
                [
                    RealmChanges(path: "/u8", instructions: [.addType(other)]),
                    RealmChanges(path: "/u8", instructions: [bad]),
                ], origin: "t")
        }
        // Another process stores the next schema; this one reads it as it is.
        let reopened = try RealmStore(directory: t.store.directory)
        try reopened.apply([.addProperties(objectType: "Person", properties: [extra])], to: "/u9", origin: "t")
        #expect(try copies() == 3)
        #expect(try reopened.schema(of: "/u7")[type: "Note"]?.properties.last?.name == "extra")
        #expect(try reopened.schema(of: "/u9")[type: "Person"]?.properties.last?.name == "extra")
        #expect(try reopened.schema(of: "/u8") == reopened.schema(of: "/u0"))
        #expect(try reopened.schema(of: "/u8")[type: "Other"] == nil)
        #expect(try t.store.schema(of: "/u9")[type: "Person"]?.properties.last?.name == "extra")
        #expect(try t.store.schema(of: "/u9")[type: "Other"] == nil)
    }

    /// Migration v6 numbers the adapters: a store whose cursors name their adapter (the layout
    /// before it) keeps every cursor where it was.
    @Test func adapterCursorsKeepTheirPlaceWhenAdaptersAreNumbered() throws {
        let t = try TemporaryStore()
        for i in 0..<4 { try fill(t.store, "/u\(i)", "p") }
        try t.store.apply([.delete(objectType: "Note", identity: 0)], to: "/u1", origin: "t")
        let a = try Adapter(store: t.store, name: "first", pathRegex: "^/u")
        let b = try Adapter(store: t.store, name: "second", pathRegex: "^/u[12]")
        try a.advance(through: [("/u0", 1), ("/u1", 2), ("/u2", 1)])
        try b.advance("/u1", through: 1)
        func pending(_ adapter: Adapter) throws -> [String] {
            try adapter.pendingCounts().map { "\($0.path) \($0.count)" }
        }
        let before = (try pending(a), try pending(b))
        #expect(before.0 == ["/u3 1"] && before.1 == ["/u1 1", "/u2 1"])
        // Back to the tables before v6, as a store of that release has them (nor v8, then).
        try (t.store.backend as! SQLiteBackend).pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE old_adapter (name TEXT PRIMARY KEY, path_regex TEXT NOT NULL,
                                              registered_at INTEGER NOT NULL) WITHOUT ROWID;
                    INSERT INTO old_adapter SELECT name, path_regex, registered_at FROM adapter;
                    CREATE TABLE old_cursor (adapter TEXT NOT NULL, realm_id INTEGER NOT NULL, version INTEGER NOT NULL,
                                             PRIMARY KEY (adapter, realm_id)) WITHOUT ROWID;
                    INSERT INTO old_cursor SELECT a.name, c.realm_id, c.version
                        FROM adapter_cursor c JOIN adapter a ON a.id = c.adapter_id;
                    DROP TABLE adapter_cursor; DROP TABLE adapter;
                    ALTER TABLE old_adapter RENAME TO adapter; ALTER TABLE old_cursor RENAME TO adapter_cursor;
                    DELETE FROM grdb_migrations WHERE identifier LIKE 'v6%' OR identifier LIKE 'v8%';
                    """)
        }
        let upgraded = try RealmStore(directory: t.store.directory)
        let a2 = try Adapter(store: upgraded, name: "first", pathRegex: "^/u")
        let b2 = try Adapter(store: upgraded, name: "second", pathRegex: "^/u[12]")
        #expect(try pending(a2) == before.0)
        #expect(try pending(b2) == before.1)
        let columns = try (upgraded.backend as! SQLiteBackend).pool.read { db in
            try db.columns(in: "adapter_cursor").map(\.name)
        }
        #expect(columns == ["adapter_id", "realm_id", "version"])
    }

    /// Migration v7 numbers the sources: each Realm keeps its last position of each source.
    @Test func sourcePositionsKeepTheirPlaceWhenSourcesAreNumbered() throws {
        let t = try TemporaryStore()
        for i in 0..<3 { try fill(t.store, "/u\(i)", "p") }
        try t.store.apply(
            [.delete(objectType: "Note", identity: 0)], to: "/u0", origin: "db",
            sourcePosition: SourcePosition(source: "postgres:a", position: "0000000A"))
        try t.store.recordSourcePosition(
            SourcePosition(source: "postgres:b", position: "0000000B"), in: ["/u1", "/u2"])
        try (t.store.backend as! SQLiteBackend).pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE old_position (realm_id INTEGER NOT NULL, source TEXT NOT NULL, position TEXT NOT NULL,
                                               PRIMARY KEY (realm_id, source)) WITHOUT ROWID;
                    INSERT INTO old_position SELECT p.realm_id, s.name, p.position
                        FROM source_position p JOIN source s ON s.id = p.source_id;
                    DROP TABLE source_position; DROP TABLE source;
                    ALTER TABLE old_position RENAME TO source_position;
                    DELETE FROM grdb_migrations WHERE identifier LIKE 'v7%';
                    """)
        }
        let upgraded = try RealmStore(directory: t.store.directory)
        #expect(try upgraded.sourcePosition("postgres:a", of: "/u0") == "0000000A")
        #expect(try upgraded.sourcePosition("postgres:b", of: "/u0") == nil)
        #expect(
            try upgraded.standings(of: ["/u1", "/u2"], source: "postgres:b").mapValues(\.position)
                == ["/u1": "0000000B", "/u2": "0000000B"])
        #expect(try upgraded.holdsChanges(from: "postgres:a") && upgraded.holdsChanges(from: "postgres:b"))
        #expect(try !upgraded.holdsChanges(from: "postgres:c"))
        try upgraded.apply(
            [.delete(objectType: "Note", identity: 0)], to: "/u1", origin: "db",
            sourcePosition: SourcePosition(source: "postgres:b", position: "0000000C"))
        #expect(try upgraded.sourcePosition("postgres:b", of: "/u1") == "0000000C")
    }

    /// What one Realm does to its objects never touches another's with the same keys: delete
    /// (and the links and lists it clears), CLEAR, CHANGE_IDENTITY, list edits, removing the Realm.
    @Test func realmsDoNotSeeEachOthersObjects() throws {
        let t = try TemporaryStore()
        for i in 0..<3 { try fill(t.store, "/u\(i)", "p") }
        try t.store.write(to: "/u0", origin: "t") { tx in
            try tx.delete("Person", "p")
            try tx.listInsert("Task", 1, "tags", at: 0, "first")
            try tx.deleteAll("Note")
        }
        try t.store.write(to: "/u1", origin: "t") { tx in try tx.changeIdentity("Note", 0, to: 7) }
        try t.store.deleteRealm("/u1")
        let u0 = try #require(try t.store.object(of: "Task", identity: 1, in: "/u0"))
        let u2 = try #require(try t.store.object(of: "Task", identity: 1, in: "/u2"))
        #expect(u0.values["owner"] == .null && u0.values["watchers"] == [] && u0.values["tags"] == ["first", "a", "p"])
        #expect(u2.values["owner"] == "p" && u2.values["watchers"] == ["p"] && u2.values["tags"] == ["a", "p"])
        #expect(try t.store.count(of: "Note", in: "/u0") == 0 && t.store.count(of: "Note", in: "/u2") == 1)
        #expect(try t.store.object(of: "Note", identity: 0, in: "/u2") != nil)
        #expect(try t.store.realmPaths() == ["/u0", "/u2"])
        #expect(
            try t.store.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM t1 WHERE realm NOT IN (SELECT id FROM realm)")
            } == 0)
    }

    /// Two Realms may give one type different properties, keys and property types (schemas only
    /// grow, each Realm's its own): each reads its own, and a property added with a default in
    /// one Realm fills only that Realm's objects.
    @Test func realmsMayGiveOneTypeDifferentProperties() throws {
        let t = try TemporaryStore()
        try t.store.write(to: "/a", origin: "t") { tx in
            try tx.addType(
                ObjectSchema(
                    name: "Item", primaryKey: "id",
                    properties: [
                        Property(name: "id", type: .scalar(.int)), Property(name: "title", type: .scalar(.string)),
                    ]))
            try tx.create("Item", ["id": 1, "title": "one"])
        }
        try t.store.write(to: "/b", origin: "t") { tx in
            try tx.addType(
                ObjectSchema(
                    name: "Item", primaryKey: "code",
                    properties: [
                        Property(name: "code", type: .scalar(.string)), Property(name: "title", type: .scalar(.int)),
                        Property(name: "id", type: .scalar(.int), isOptional: true),
                    ]))
            try tx.create("Item", ["code": "1", "title": 7, "id": 99])
        }
        try t.store.write(to: "/a", origin: "t") { tx in
            try tx.addProperties([Property(name: "rank", type: .scalar(.double), defaultValue: 1.5)], to: "Item")
        }
        try t.store.write(to: "/b", origin: "t") { tx in
            try tx.addProperties([Property(name: "rank", type: .scalar(.string), isOptional: true)], to: "Item")
            try tx.update("Item", "1", ["rank": "high"])
        }
        #expect(
            try t.store.object(of: "Item", identity: 1, in: "/a")?.values == ["id": 1, "title": "one", "rank": 1.5])
        #expect(
            try t.store.object(of: "Item", identity: "1", in: "/b")?.values == [
                "code": "1", "title": 7, "id": 99, "rank": "high",
            ])
        #expect(try t.store.identity(of: "Item", where: "id", equals: 99, in: "/b") == "1")
        #expect(try t.store.identity(of: "Item", where: "id", equals: 99, in: "/a") == nil)
    }

    /// A transaction that registered a new type and then failed leaves nothing behind, in the
    /// store or in what the store remembers of its layout: the same type can be added again.
    @Test func aFailedTransactionLeavesNoLayoutBehind() throws {
        let t = try TemporaryStore()
        let item = ObjectSchema(
            name: "Item", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.int)), Property(name: "tags", type: .list(.scalar(.string))),
            ])
        #expect(throws: RealmAdapterError.self) {
            try t.store.apply(
                [
                    .addType(item), .insert(objectType: "Item", identity: 1, values: ["id": 1]),
                    .delete(objectType: "Item", identity: 2),
                ], to: "/a", origin: "t")
        }
        try t.store.apply(
            [.addType(item), .insert(objectType: "Item", identity: 1, values: ["id": 1, "tags": ["x"]])], to: "/a",
            origin: "t")
        #expect(try t.store.list("tags", of: "Item", identity: 1, in: "/a") == ["x"])
    }

    /// The indexes of links (`Task.owner`) and lists of links (`Task.watchers`), by name.
    func linkIndexes(_ store: RealmStore) throws -> [String] {
        try store.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND (name LIKE '%_value' OR name LIKE '%_i')"
                    + " ORDER BY name")
        }
    }

    /// A bulk load leaves the indexes of links out while it writes and builds them at its end;
    /// one that failed leaves them missing until the next one, which builds them first. Links
    /// work without them all the while (deleting a target still finds what links to it).
    @Test func linkIndexesDeferredByALoadAreBuiltAtItsEnd() throws {
        let t = try TemporaryStore()
        try t.store.withLinkIndexesDeferred {
            try fill(t.store, "/a", "ann")
            #expect(try linkIndexes(t.store).isEmpty)
            try t.store.apply([.delete(objectType: "Person", identity: "ann")], to: "/a", origin: "t")
            let task = try #require(try t.store.object(of: "Task", identity: 1, in: "/a"))
            #expect(task.values["owner"] == .null && task.values["watchers"] == [])
        }
        let built = try linkIndexes(t.store)
        #expect(built.count == 2)

        let u = try TemporaryStore()
        struct Interrupted: Error {}
        #expect(throws: Interrupted.self) {
            try u.store.withLinkIndexesDeferred {
                try fill(u.store, "/a", "ann")
                throw Interrupted()
            }
        }
        #expect(try linkIndexes(u.store).isEmpty)
        let rebuilt = try u.store.withLinkIndexesDeferred { try linkIndexes(u.store) }
        #expect(rebuilt == built)
        // Outside a load, a type registered gets its indexes at once.
        let v = try TemporaryStore()
        try fill(v.store, "/a", "ann")
        #expect(try linkIndexes(v.store) == built)
    }
}
