import Foundation
import GRDB
import Testing

@testable import RealmAdapter

/// Change sets (what a transaction changed, per type) for every instruction and their combinations,
/// on both stores: each test of ``ChangeSetFixture`` on a fresh store of each kind.
@Suite struct ChangeSetTests {
    static let cases: [(String, @Sendable (ChangeSetFixture) throws -> Void)] = [
        ("inserts", { try $0.insertsAreNewObjectsWithTheirValues() }),
        ("sets", { try $0.setsNameOnlyThePropertiesThatChanged() }),
        ("deletes", { try $0.deletesGiveLastValuesAndTheLinksTheyNulled() }),
        ("clear", { try $0.clearDeletesEveryObjectOfTheType() }),
        ("lists", { try $0.listInstructionsModifyTheirOwner() }),
        ("change identity", { try $0.changeIdentityIsTheOldDeletedAndTheNewInserted() }),
        ("combinations", { try $0.combinationsInOneTransactionGiveTheNetEffect() }),
        ("schema changes", { try $0.schemaChangesAreListed() }),
        ("bulk inserts", { try $0.bulkInsertsAreEachInserted() }),
        ("snapshots", { try $0.snapshotsReadTheRealmAsOfTheirVersion() }),
        ("only followed Realms", { try $0.onlyFollowedRealmsRecordAndOlderTransactionsSaySo() }),
        ("compaction", { try $0.compactionRemovesRecordedImagesWithHistory() }),
    ]

    @Test(arguments: StoreKind.all, cases.map(\.0))
    func changeSets(_ kind: StoreKind, _ name: String) throws {
        let body = try #require(Self.cases.first { $0.0 == name }).1
        try body(try ChangeSetFixture(kind))
    }
}

/// A store with a recording adapter, a Realm /events with two people and a task, and the tests
/// that change it.
struct ChangeSetFixture {
    let t: TemporaryStore
    let path = "/events"

    init(_ kind: StoreKind) throws {
        t = try TemporaryStore(kind)
        // Registered first: the Realm's every transaction is recorded.
        _ = try Adapter(store: t.store, name: "events", pathRegex: "^/events$", recordsChanges: true)
        try t.store.addTaskSchema(path)
        try apply([
            .insert(objectType: "Person", identity: "ann", values: ["id": "ann", "name": "Ann"]),
            .insert(objectType: "Person", identity: "bob", values: ["id": "bob", "name": "Bob"]),
            .insert(
                objectType: "Task", identity: .int(1),
                values: ["id": .int(1), "title": "write", "owner": "ann", "watchers": .list(["ann", "bob"])]),
        ])
    }

    @discardableResult
    func apply(_ instructions: [Instruction]) throws -> Int64 {
        try t.store.apply(instructions, to: path, origin: "app")
    }

    /// The change set of the Realm's latest transaction.
    func latest() throws -> ChangeSet {
        let v = try t.store.version(of: path)
        let tx = try #require(try t.store.history(of: path, after: v - 1).first)
        return try t.store.changeSet(of: tx, in: path)
    }

    func person(_ id: String, _ name: Value) -> RealmObject {
        RealmObject(objectType: "Person", identity: .string(id), values: ["id": .string(id), "name": name])
    }

    func insertsAreNewObjectsWithTheirValues() throws {
        let set = try latest()
        #expect(set[type: "Person"]?.inserted == [person("ann", "Ann"), person("bob", "Bob")])
        let task = try #require(set[type: "Task"]?.inserted.first)
        #expect(task.values["watchers"] == .list(["ann", "bob"]) && task.values["done"] == .bool(false))
        #expect(set[type: "Task"]?.modified == [] && set.origin == "app" && set.schemaChanges == [])
    }

    func setsNameOnlyThePropertiesThatChanged() throws {
        try apply([.set(objectType: "Task", identity: .int(1), values: ["title": "edit", "done": .bool(false)])])
        let m = try #require(try latest()[type: "Task"]?.modified.first)
        #expect(m.changes == [PropertyChange(name: "title", before: "write", after: "edit")])
        #expect(m.object.values["title"] == "edit" && m.identity == .int(1))
        // A SET to the value the object has changes nothing.
        try apply([.set(objectType: "Task", identity: .int(1), values: ["title": "edit"])])
        #expect(try latest().types == [])
    }

    func deletesGiveLastValuesAndTheLinksTheyNulled() throws {
        try apply([.delete(objectType: "Person", identity: "ann")])
        let set = try latest()
        #expect(set[type: "Person"]?.deleted == [person("ann", "Ann")])
        let m = try #require(set[type: "Task"]?.modified.first)
        #expect(
            m.changes == [
                PropertyChange(name: "owner", before: "ann", after: .null),
                PropertyChange(name: "watchers", before: .list(["ann", "bob"]), after: .list(["bob"])),
            ])
    }

    func clearDeletesEveryObjectOfTheType() throws {
        try apply([.clear(objectType: "Person")])
        let set = try latest()
        #expect(set[type: "Person"]?.deleted == [person("ann", "Ann"), person("bob", "Bob")])
        #expect(set[type: "Task"]?.modified.first?.changes.map(\.name) == ["owner", "watchers"])
        // A CLEAR of a type without objects changes nothing, and is no error.
        try apply([.clear(objectType: "Person")])
        #expect(try latest().isEmpty)
    }

    func listInstructionsModifyTheirOwner() throws {
        try apply([
            .listInsert(objectType: "Task", identity: .int(1), property: "tags", index: 0, value: "a"),
            .listInsert(objectType: "Task", identity: .int(1), property: "tags", index: 1, value: "b"),
            .listSet(objectType: "Task", identity: .int(1), property: "watchers", index: 0, value: "bob"),
            .listErase(objectType: "Task", identity: .int(1), property: "watchers", index: 1),
        ])
        let m = try #require(try latest()[type: "Task"]?.modified.first)
        #expect(
            m.changes == [
                PropertyChange(name: "watchers", before: .list(["ann", "bob"]), after: .list(["bob"])),
                PropertyChange(name: "tags", before: .list([]), after: .list(["a", "b"])),
            ])
        try apply([.listClear(objectType: "Task", identity: .int(1), property: "tags")])
        #expect(
            try latest()[type: "Task"]?.modified.first?.changes == [
                PropertyChange(name: "tags", before: .list(["a", "b"]), after: .list([]))
            ])
    }

    func changeIdentityIsTheOldDeletedAndTheNewInserted() throws {
        try apply([.insert(objectType: "Note", identity: .int(1), values: ["text": "hi"])])
        try apply([.changeIdentity(objectType: "Note", identity: .int(1), newIdentity: .int(7))])
        let notes = try #require(try latest()[type: "Note"])
        let note = { (id: Int64) in RealmObject(objectType: "Note", identity: .int(id), values: ["text": "hi"]) }
        #expect(notes.deleted == [note(1)] && notes.inserted == [note(7)])
        #expect(notes.identityChanges == [IdentityChange(from: .int(1), to: .int(7))])
    }

    /// The net effect of one transaction: what it created and removed again is not there, an
    /// object inserted and then changed is inserted with its last values, one removed and made
    /// again is modified.
    func combinationsInOneTransactionGiveTheNetEffect() throws {
        try apply([
            .insert(objectType: "Person", identity: "cat", values: ["id": "cat", "name": "Cat"]),
            .set(objectType: "Person", identity: "cat", values: ["name": "Kat"]),
            .insert(objectType: "Person", identity: "dan", values: ["id": "dan"]),
            .delete(objectType: "Person", identity: "dan"),
            .delete(objectType: "Person", identity: "bob"),
            .insert(objectType: "Person", identity: "bob", values: ["id": "bob", "name": "Robert"]),
            .set(objectType: "Person", identity: "ann", values: ["name": "Ann B"]),
            .set(objectType: "Person", identity: "ann", values: ["name": "Ann"]),
        ])
        let people = try #require(try latest()[type: "Person"])
        #expect(people.inserted == [person("cat", "Kat")] && people.deleted == [])
        #expect(people.modified.map(\.identity) == ["bob"])
        #expect(people.modified.first?.changes == [PropertyChange(name: "name", before: "Bob", after: "Robert")])
        // bob's delete nulled Task 1's links; his re-insert did not restore them.
        #expect(try latest()[type: "Task"]?.modified.first?.changes.map(\.name) == ["watchers"])
    }

    func schemaChangesAreListed() throws {
        let added = Property(name: "email", type: .scalar(.string), isOptional: true)
        try apply([
            .addProperties(objectType: "Person", properties: [added]),
            .set(objectType: "Person", identity: "ann", values: ["email": "a@x"]),
        ])
        let set = try latest()
        #expect(set.schemaChanges == [.addProperties(objectType: "Person", properties: [added])])
        #expect(
            set[type: "Person"]?.modified.first?.changes == [PropertyChange(name: "email", before: .null, after: "a@x")]
        )
    }

    /// Many INSERTs of one type in a row go through the multi-row statements; each is recorded.
    func bulkInsertsAreEachInserted() throws {
        try apply(
            (0..<100).map { .insert(objectType: "Note", identity: .int($0), values: ["text": .string("n\($0)")]) })
        #expect(try latest()[type: "Note"]?.inserted.count == 100)
    }

    /// The Realm as of a version, whatever came after: values changed, objects deleted and
    /// objects created since read as they were.
    func snapshotsReadTheRealmAsOfTheirVersion() throws {
        let v = try t.store.version(of: path)
        try apply([.set(objectType: "Person", identity: "ann", values: ["name": "Changed"])])
        try apply([.delete(objectType: "Person", identity: "bob")])
        try apply([.insert(objectType: "Person", identity: "eve", values: ["id": "eve", "name": "Eve"])])
        try apply([.set(objectType: "Person", identity: "ann", values: ["name": "Again"])])
        let then = RealmSnapshot(store: t.store, path: path, version: v)
        #expect(try then.object(of: "Person", identity: "ann") == person("ann", "Ann"))
        #expect(try then.object(of: "Person", identity: "bob") == person("bob", "Bob"))
        #expect(try then.object(of: "Person", identity: "eve") == nil)
        #expect(Set(try then.objects(of: "Person")) == [person("ann", "Ann"), person("bob", "Bob")])
        let now = RealmSnapshot(store: t.store, path: path, version: try t.store.version(of: path))
        #expect(Set(try now.objects(of: "Person")) == [person("ann", "Again"), person("eve", "Eve")])
        #expect(
            try RealmSnapshot(store: t.store, path: path, version: v + 2).object(of: "Person", identity: "ann")
                == person("ann", "Changed"))
    }

    /// Realms no recording adapter follows record nothing; transactions from before a recording
    /// adapter was registered have no change set, and say why.
    func onlyFollowedRealmsRecordAndOlderTransactionsSaySo() throws {
        try t.store.addTaskSchema("/other")
        try t.store.apply(
            [.insert(objectType: "Person", identity: "x", values: ["id": "x"])], to: "/other", origin: "app")
        let rows = try t.store.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM object_change WHERE realm_id = (SELECT id FROM realm WHERE path = '/other')")
        }
        #expect(rows == 0)
        let tx = try #require(try t.store.history(of: "/other").last)
        #expect(throws: RealmAdapterError.changesNotRecorded(path: "/other", version: tx.version)) {
            try t.store.changeSet(of: tx, in: "/other")
        }
        // A recording adapter registered later starts at the Realms' versions then.
        let late = try Adapter(store: t.store, name: "late", pathRegex: "^/other$", recordsChanges: true)
        #expect(try late.current("/other") == nil)
    }

    /// Compaction removes before-images with the history every follower has processed.
    func compactionRemovesRecordedImagesWithHistory() throws {
        let adapter = try Adapter(store: t.store, name: "events", pathRegex: "^/events$", recordsChanges: true)
        let v = try t.store.version(of: path)
        try adapter.advance(path, through: v)
        try t.store.compact(path)
        let rows = try t.store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM object_change") }
        #expect(rows == 0)
    }
}
