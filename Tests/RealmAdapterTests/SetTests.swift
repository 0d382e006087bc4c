import Testing

@testable import RealmAdapter

/// SET writes its single values with one statement, whose count of rows says whether the object
/// exists: what it stores and what it refuses are what a lookup first and a statement per
/// property gave.
@Suite struct SetTests {
    static func store(_ kind: StoreKind, recording: Bool = false) throws -> TemporaryStore {
        let t = try TemporaryStore(kind)
        if recording { _ = try Adapter(store: t.store, name: "events", pathRegex: "^/x$", recordsChanges: true) }
        try t.store.addTaskSchema("/x")
        try t.store.apply(
            [
                .insert(objectType: "Person", identity: "ann", values: ["id": "ann"]),
                .insert(objectType: "Task", identity: 1, values: ["id": 1, "title": "one", "tags": ["a"]]),
            ], to: "/x", origin: "t")
        return t
    }

    /// A missing object is what is named, whatever else is wrong with the SET (a value refused, a
    /// link's target missing, the key alone, nothing at all, a list).
    @Test(
        arguments: StoreKind.all,
        [
            ["title": "x"], ["title": "x", "owner": "nobody"], ["owner": "nobody"], ["id": 99], [:], ["tags": ["b"]],
            ["title": "x", "done": true, "tags": ["b"]],
        ] as [PropertyValues])
    func aSetOfAMissingObjectNamesIt(_ kind: StoreKind, values: PropertyValues) throws {
        let t = try Self.store(kind)
        #expect {
            try t.store.apply([.set(objectType: "Task", identity: 99, values: values)], to: "/x", origin: "t")
        } throws: { error in
            (error as? RealmAdapterError)?.code == .objectNotFound && "\(error)".contains("no object")
        }
        #expect(try t.store.version(of: "/x") == 2)
    }

    /// With changes being recorded (the object is then looked up first), the same: the missing
    /// object is named, nothing is stored, and an existing one's change is recorded.
    @Test(arguments: StoreKind.all) func aRecordedSetOfAMissingObjectNamesIt(_ kind: StoreKind) throws {
        let t = try Self.store(kind, recording: true)
        for values: PropertyValues in [["title": "x"], ["owner": "nobody"], [:], ["tags": ["b"]]] {
            #expect {
                try t.store.apply([.set(objectType: "Task", identity: 99, values: values)], to: "/x", origin: "t")
            } throws: { error in
                (error as? RealmAdapterError)?.code == .objectNotFound && "\(error)".contains("no object")
            }
        }
        #expect(try t.store.version(of: "/x") == 2)
        try t.store.apply([.set(objectType: "Task", identity: 1, values: ["title": "uno"])], to: "/x", origin: "t")
        let tx = try #require(try t.store.history(of: "/x", after: 2).first)
        let modified = try t.store.changeSet(of: tx, in: "/x")[type: "Task"]?.modified
        #expect(modified?.map(\.identity) == [1], "\(String(describing: modified))")
    }

    /// On an object that exists: several properties at once, a link, a list, a property named
    /// twice (the last value stays), and a refused link target naming the link.
    @Test(arguments: StoreKind.all) func aSetStoresEachValueAndTheLastOfARepeatedOne(_ kind: StoreKind) throws {
        let t = try Self.store(kind)
        let values = PropertyValues([
            .init("title", "first"), .init("done", true), .init("owner", "ann"), .init("tags", ["b", "c"]),
            .init("title", "last"),
        ])
        try t.store.apply([.set(objectType: "Task", identity: 1, values: values)], to: "/x", origin: "t")
        let task = try #require(try t.store.object(of: "Task", identity: 1, in: "/x"))
        #expect(task.values["title"] == "last")
        #expect(task.values["done"] == true)
        #expect(task.values["owner"] == "ann")
        #expect(try t.store.list("tags", of: "Task", identity: 1, in: "/x") == ["b", "c"])
        #expect {
            try t.store.apply(
                [.set(objectType: "Task", identity: 1, values: ["title": "x", "owner": "nobody"])], to: "/x",
                origin: "t")
        } throws: { error in
            (error as? RealmAdapterError)?.code == .objectNotFound
                && "\(error)".contains("Task.owner links to a Person")
        }
        #expect(try t.store.object(of: "Task", identity: 1, in: "/x")?.values["title"] == "last")
    }
}
