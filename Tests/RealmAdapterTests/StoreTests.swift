import Foundation
import Testing

@testable import RealmAdapter

@Suite struct StoreTests {
    @Test(arguments: StoreKind.all) func appliesEveryInstructionTypeAndKeepsHistory(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let s = t.store
        for (i, instruction) in everyInstruction.enumerated() {
            try s.apply([instruction], to: "/all", origin: "test")
            #expect(try s.version(of: "/all") == Int64(i + 1))
        }
        // The state after the whole sequence.
        #expect(try s.objects(of: "Task", in: "/all").isEmpty)
        #expect(try s.count(of: "Note", in: "/all") == 0)
        let ann = try #require(try s.object(of: "Person", identity: "p1", in: "/all"))
        #expect(ann.values["age"] == .int(41))
        #expect(ann.values["nicknames"] == .list(["A", nil]))
        // History returns exactly what was applied, in order.
        let history = try s.history(of: "/all")
        #expect(history.map(\.version) == Array(1...Int64(everyInstruction.count)))
        #expect(history.flatMap(\.instructions) == everyInstruction)
        #expect(history.allSatisfy { $0.origin == "test" })
        #expect(try s.history(of: "/all", after: 10).map(\.version) == Array(11...Int64(everyInstruction.count)))
    }

    /// The Realms under a directory, by a range of the path index: not its neighbours whose
    /// names start the same (`/abcd`, `/abc0`), nor the directory itself.
    @Test(arguments: StoreKind.all) func realmPathsUnderADirectory(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        for path in ["/abc", "/abc/x", "/abc/y/z", "/abc0/x", "/abcd/x", "/ab/x", "/abc-/x"] {
            try t.store.apply([], to: path, origin: "test")
            try t.store.write(to: path, origin: "test") { _ in }
        }
        #expect(try t.store.realmPaths(under: "/abc") == ["/abc/x", "/abc/y/z"])
        #expect(try t.store.realmPaths(under: "/abc/") == ["/abc/x", "/abc/y/z"])
        #expect(try t.store.realmPaths(under: "/none").isEmpty)
    }

    @Test(arguments: StoreKind.all) func storesEveryValueKindLosslessly(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/v")
        let insert = everyInstruction.first { if case .insert("Task", _, _) = $0 { true } else { false } }!
        try t.store.apply(Array(everyInstruction.prefix(5)), to: "/v2", origin: "test")
        try t.store.apply(
            [
                .insert(objectType: "Person", identity: "p1", values: ["id": "p1"]),
                .insert(objectType: "Person", identity: "p2", values: ["id": "p2"]), insert,
            ], to: "/v", origin: "test")
        guard case .insert(_, _, let values) = insert else { return }
        let task = try #require(try t.store.object(of: "Task", identity: 1, in: "/v"))
        for e in values { #expect(task.values[e.name] == e.value, "property \(e.name)") }
        #expect(task.values["done"] == true)
    }

    @Test(arguments: StoreKind.all) func writeTransactionRecordsOnlyChangedProperties(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/w")
        let (id, version) = try t.store.write(to: "/w", origin: "app") { tx in
            try tx.create("Person", ["id": "p1", "name": "Ann"])
            let id = try tx.create("Task", ["id": 7, "title": "Write tests", "owner": "p1"])
            try tx.listAppend("Task", id, "tags", "work")
            try tx.listAppend("Task", id, "tags", "urgent")
            try tx.listInsert("Task", id, "tags", at: 0, "first")
            #expect(try tx.list("Task", id, "tags") == ["first", "work", "urgent"])
            return id
        }
        #expect(id == .int(7))
        #expect(version == 2)
        try t.store.write(to: "/w", origin: "app") { tx in
            try tx.update("Task", 7, ["title": "Write tests", "done": true, "owner": "p1"])
            try tx.update("Task", 7, ["title": "Write tests"])  // no change: nothing recorded
            try tx.listErase("Task", 7, "tags", at: 1)
        }
        let last = try #require(try t.store.history(of: "/w", after: 2).first)
        #expect(
            last.instructions == [
                .set(objectType: "Task", identity: 7, values: ["done": true]),
                .listErase(objectType: "Task", identity: 7, property: "tags", index: 1),
            ])
        #expect(try t.store.list("tags", of: "Task", identity: 7, in: "/w") == ["first", "urgent"])
        // A write that changes nothing makes no version.
        let (_, same) = try t.store.write(to: "/w") { tx in try tx.update("Task", 7, ["done": true]) }
        #expect(same == 3)
    }

    /// "café" composed (U+00E9) and decomposed (e + U+0301) are equal to Swift's `String`, but
    /// two texts to SQLite, Postgres and Realm: a value changed from one to the other is a
    /// change, and two keys that differ so are two objects.
    @Test(arguments: StoreKind.all) func stringsThatDifferOnlyInUnicodeNormalizationAreDifferentValues(
        _ kind: StoreKind
    ) throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(Value.string(composed) != Value.string(decomposed))
        #expect(Set<Value>([.string(composed), .string(decomposed)]).count == 2)
        #expect(Value.list([.string(composed)]) != Value.list([.string(decomposed)]))
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/n")
        try t.store.write(to: "/n", origin: "app") { tx in
            try tx.create("Person", ["id": .string(composed), "name": .string(composed)])
            try tx.create("Person", ["id": .string(decomposed), "name": "other"])
        }
        try t.store.write(to: "/n", origin: "app") { tx in
            try tx.update("Person", .string(composed), ["name": .string(decomposed)])
        }
        let person = try t.store.object(of: "Person", identity: .string(composed), in: "/n")
        let name = try #require(person?.values["name"].flatMap { if case .string(let s) = $0 { s } else { nil } })
        #expect(Array(name.utf8) == Array(decomposed.utf8))
        #expect(try t.store.count(of: "Person", in: "/n") == 2)
    }

    @Test(arguments: StoreKind.all) func objectsWithoutPrimaryKeyGetRowKeys(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/n")
        let keys = try t.store.write(to: "/n") { tx in
            [try tx.create("Note", ["text": "a"]), try tx.create("Note", ["text": "b"])]
        }.result
        #expect(keys == [0, 1])
        try t.store.write(to: "/n") { tx in try tx.changeIdentity("Note", 0, to: 10) }
        #expect(try t.store.objects(of: "Note", in: "/n").map(\.identity) == [1, 10])
        #expect(throws: RealmAdapterError.self) {
            try t.store.apply([.changeIdentity(objectType: "Task", identity: 1, newIdentity: 2)], to: "/n", origin: "t")
        }
    }

    @Test(arguments: StoreKind.all) func deletingATargetNullsLinksAndLeavesLists(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/d")
        try t.store.write(to: "/d") { tx in
            for p in ["a", "b", "c"] { try tx.create("Person", ["id": .string(p)]) }
            try tx.create(
                "Task", ["id": 1, "title": "x", "owner": "b", "watchers": ["a", "b", "b", "b", "c", "b", "a"]])
        }
        try t.store.apply([.delete(objectType: "Person", identity: "b")], to: "/d", origin: "t")
        let task = try #require(try t.store.object(of: "Task", identity: 1, in: "/d"))
        #expect(task.values["owner"] == .null)
        #expect(task.values["watchers"] == ["a", "c", "a"])
        // The list is numbered again from 0: its positions are where later edits land.
        try t.store.apply(
            [.listSet(objectType: "Task", identity: 1, property: "watchers", index: 2, value: "c")], to: "/d",
            origin: "t")
        #expect(try t.store.list("watchers", of: "Task", identity: 1, in: "/d") == ["a", "c", "c"])
        try t.store.apply([.clear(objectType: "Person")], to: "/d", origin: "t")
        #expect(try t.store.object(of: "Task", identity: 1, in: "/d")?.values["watchers"] == [])
    }

    /// Appending many items records a LIST_INSERT each, as one by one does; a missing target
    /// names its LIST_INSERT, at its place in the list.
    @Test(arguments: StoreKind.all) func appendingToAListRecordsOneInsertEach(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/l")
        try t.store.write(to: "/l") { tx in
            for p in ["a", "b", "c"] { try tx.create("Person", ["id": .string(p)]) }
            try tx.create("Task", ["id": 1, "title": "x", "watchers": ["c"]])
        }
        try t.store.write(to: "/l") { tx in try tx.listAppend("Task", 1, "watchers", contentsOf: ["a", "b", "a"]) }
        #expect(try t.store.list("watchers", of: "Task", identity: 1, in: "/l") == ["c", "a", "b", "a"])
        #expect(
            try t.store.history(of: "/l").last?.instructions
                == (1...3).map { i in
                    .listInsert(
                        objectType: "Task", identity: 1, property: "watchers", index: i, value: ["a", "b", "a"][i - 1])
                })
        #expect {
            try t.store.write(to: "/l") { tx in try tx.listAppend("Task", 1, "watchers", contentsOf: ["b", "nobody"]) }
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.context["instruction"] == "1" && "\(error)".contains("LIST_INSERT Task.watchers")
        }
        #expect(try t.store.list("watchers", of: "Task", identity: 1, in: "/l") == ["c", "a", "b", "a"])
    }

    /// Lists of many owners appended at once (a loader's join table) go where one by one puts
    /// them: owners' lengths are looked up many at a time, past one lookup's worth, an owner may
    /// come twice, and a missing owner is named as alone.
    @Test(arguments: StoreKind.all) func appendingToManyListsAtOnceIsAppendingToEach(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let owners = RealmWriter.keysPerLookup + 70
        for path in ["/many", "/each"] {
            try t.store.addTaskSchema(path)
            try t.store.write(to: path) { tx in
                for i in 0..<owners { try tx.create("Task", ["id": .int(Int64(i)), "title": "t", "tags": ["x"]]) }
            }
        }
        // Owner i gets i % 4 tags (none for some); owner 3 comes again at the end.
        let lists =
            (0..<owners).map { i in (Int64(i), (0..<(i % 4)).map { Value.string("tag \(i).\($0)") }) }
            + [(3, ["again"])]
        try t.store.write(to: "/many") { tx in
            try tx.appendToLists("Task", "tags", lists.map { .init(owner: .int($0.0), items: $0.1) })
        }
        try t.store.write(to: "/each") { tx in
            for (owner, items) in lists { try tx.listAppend("Task", .int(owner), "tags", contentsOf: items) }
        }
        #expect(try t.store.objects(of: "Task", in: "/many") == t.store.objects(of: "Task", in: "/each"))
        #expect(
            try t.store.list("tags", of: "Task", identity: 3, in: "/many") == [
                "x", "tag 3.0", "tag 3.1", "tag 3.2", "again",
            ])
        #expect(try t.store.history(of: "/many").last?.instructions == t.store.history(of: "/each").last?.instructions)
        #expect {
            try t.store.write(to: "/many") { tx in
                try tx.appendToLists("Task", "tags", [.init(owner: 1, items: ["y"]), .init(owner: 9999, items: ["z"])])
            }
        } throws: { error in "\(error)".contains("9999") }
    }

    /// An object may link to itself, and to an object of its type inserted before it in the same
    /// transaction: the insert checks such a link against what the transaction has stored so far,
    /// whether it stores rows one by one (a database's upserts) or many per statement (`apply`).
    @Test(arguments: StoreKind.all) func objectsLinkToThemselvesAndToEarlierObjectsOfTheirTransaction(_ kind: StoreKind)
        throws
    {
        let t = try TemporaryStore(kind)
        let node = ObjectSchema(
            name: "Node", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.int)),
                Property(name: "parent", type: .link("Node"), isOptional: true),
            ])
        try t.store.apply([.addType(node)], to: "/n", origin: "test")
        func parent(_ id: Int64) throws -> Value? {
            try t.store.object(of: "Node", identity: .int(id), in: "/n")?.values["parent"]
        }
        try t.store.apply(
            [
                .insert(objectType: "Node", identity: 1, values: ["id": 1, "parent": nil]),
                .insert(objectType: "Node", identity: 2, values: ["id": 2, "parent": 1]),
                .insert(objectType: "Node", identity: 3, values: ["id": 3, "parent": 3]),
                .insert(objectType: "Node", identity: 4, values: ["id": 4, "parent": 2]),
            ], to: "/n", origin: "test")
        #expect(try [1, 2, 3, 4].map(parent) == [.null, .int(1), .int(3), .int(2)])
        try t.store.write(to: "/n", origin: "db") { tx in
            try tx.upsert("Node", 8, ["id": 8, "parent": 8])
            try tx.upsert("Node", 9, ["id": 9, "parent": 8])
            try tx.record(.insert(objectType: "Node", identity: 10, values: ["id": 10, "parent": 10]))
        }
        #expect(try [8, 9, 10].map(parent) == [.int(8), .int(8), .int(10)])
        // A link to an object inserted after it, or to none, is still refused, and nothing is stored.
        for (at, bad) in [(11, 12), (11, 99)] {
            #expect(throws: RealmAdapterError.self) {
                try t.store.apply(
                    [
                        .insert(
                            objectType: "Node", identity: .int(Int64(at)),
                            values: ["id": .int(Int64(at)), "parent": .int(Int64(bad))]),
                        .insert(objectType: "Node", identity: 12, values: ["id": 12, "parent": nil]),
                    ], to: "/n", origin: "test")
            }
            #expect(try t.store.object(of: "Node", identity: 12, in: "/n") == nil)
        }
    }

    /// Each bad transaction starts with a valid instruction, so rejecting it proves nothing is partly applied.
    @Test(arguments: [
        (
            Instruction.insert(objectType: "Ghost", identity: 1, values: [:]), RealmAdapterError.Code.schemaViolation,
            "unknown type 'Ghost'"
        ),
        (
            .insert(objectType: "Task", identity: 2, values: ["id": 2, "title": "t", "nope": 1]), .schemaViolation,
            "unknown property 'nope'"
        ),
        (
            .insert(objectType: "Task", identity: 2, values: ["id": 2, "title": 5]), .invalidValue,
            "Task.title: expected string"
        ),
        (
            .insert(objectType: "Task", identity: 2, values: ["id": 2, "title": nil]), .invalidValue,
            "null is not allowed"
        ),
        (
            .insert(objectType: "Task", identity: 2, values: ["id": 2]), .invalidValue,
            "no value for required property 'title'"
        ),
        (
            .insert(objectType: "Task", identity: 1, values: ["id": 1, "title": "dup"]), .duplicatePrimaryKey,
            "already has an object"
        ),
        (
            .insert(objectType: "Task", identity: 2, values: ["id": 2, "title": "t", "owner": "nobody"]),
            .objectNotFound, "links to a Person that does not exist"
        ),
        (.set(objectType: "Task", identity: 99, values: ["title": "x"]), .objectNotFound, "no object"),
        (.set(objectType: "Task", identity: 1, values: ["id": 5]), .schemaViolation, "cannot change the primary key"),
        (.delete(objectType: "Task", identity: 99), .objectNotFound, "no object"),
        (
            .listInsert(objectType: "Task", identity: 1, property: "tags", index: 5, value: "x"), .listIndexOutOfRange,
            "index 5 is out of range"
        ),
        (
            .listSet(objectType: "Task", identity: 1, property: "tags", index: 1, value: "x"), .listIndexOutOfRange,
            "which has 1 element"
        ),
        (.listErase(objectType: "Task", identity: 1, property: "title", index: 0), .schemaViolation, "is not a list"),
        (
            .addProperties(objectType: "Task", properties: [Property(name: "title", type: .scalar(.int))]),
            .invalidSchema, "destructive"
        ),
        (.addType(ObjectSchema(name: "Task", primaryKey: "title", properties: [])), .invalidSchema, "primary key"),
    ])
    func rejectsSchemaViolationsWholly(bad: Instruction, code: RealmAdapterError.Code, reason: String) throws {
        let t = try TemporaryStore()
        try t.store.addTaskSchema("/x")
        try t.store.apply(
            [.insert(objectType: "Task", identity: 1, values: ["id": 1, "title": "one", "tags": ["only"]])], to: "/x",
            origin: "t")
        let before = try t.store.version(of: "/x")
        let good = Instruction.insert(objectType: "Person", identity: "ok", values: ["id": "ok"])
        #expect {
            try t.store.apply([good, bad], to: "/x", origin: "t")
        } throws: { error in
            let e = error as! RealmAdapterError
            return e.code == code && e.message.contains(reason) && e.context["instruction"] == "1"
                && e.context["realm.path"] == "/x"
        }
        #expect(try t.store.version(of: "/x") == before)
        #expect(try t.store.object(of: "Person", identity: "ok", in: "/x") == nil)
        #expect(try t.store.schema(of: "/x") == (try Schema(taskSchema)))
    }

    @Test(arguments: StoreKind.all) func sourcePositionIsRecordedWithTheTransaction(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/a")
        try t.store.addTaskSchema("/b")
        let pos = SourcePosition(source: "postgres", position: "0/16B3748")
        try t.store.apply(
            [
                RealmChanges(
                    path: "/a", instructions: [.insert(objectType: "Person", identity: "x", values: ["id": "x"])]),
                RealmChanges(path: "/b", instructions: []),
            ], origin: "pg", sourcePosition: pos)
        #expect(try t.store.sourcePosition("postgres", of: "/a") == "0/16B3748")
        #expect(try t.store.sourcePosition("postgres", of: "/b") == "0/16B3748")
        #expect(try t.store.latestPosition(from: "postgres") == "0/16B3748")
        #expect(try t.store.latestPosition(from: "sqlserver") == nil)
        // History keeps it with the transaction (a replay would show as the same position twice);
        // a transaction without one, and a Realm with no instructions, record none.
        try t.store.apply([.insert(objectType: "Person", identity: "z", values: ["id": "z"])], to: "/a", origin: "app")
        #expect(try t.store.history(of: "/a").map(\.sourcePosition) == [nil, pos, nil])
        #expect(try t.store.history(of: "/b").map(\.sourcePosition) == [nil])
        let adapter = try Adapter(store: t.store, name: "reader", pathRegex: ".*")
        #expect(try adapter.pending("/a", limit: 10).map(\.sourcePosition) == [nil, pos, nil])
        // A failing multi-Realm write records nothing anywhere.
        #expect(throws: RealmAdapterError.self) {
            try t.store.apply(
                [
                    RealmChanges(
                        path: "/a", instructions: [.insert(objectType: "Person", identity: "y", values: ["id": "y"])]),
                    RealmChanges(path: "/b", instructions: [.delete(objectType: "Person", identity: "missing")]),
                ],
                origin: "pg", sourcePosition: SourcePosition(source: "postgres", position: "0/FFFFFFF"))
        }
        #expect(try t.store.sourcePosition("postgres", of: "/a") == "0/16B3748")
        #expect(try t.store.object(of: "Person", identity: "y", in: "/a") == nil)
    }

    /// A source's positions are one stream: a store transaction records its position once for the
    /// whole store, and every Realm holds the source's transactions up to it (one that touched the
    /// Realm was applied with it; one that did not had nothing for it).
    @Test(arguments: StoreKind.all) func aSourcePositionCountsForEveryRealmOfTheStore(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/a")
        try t.store.addTaskSchema("/b")
        try t.store.apply(
            [.insert(objectType: "Person", identity: "x", values: ["id": "x"])], to: "/a", origin: "pg",
            sourcePosition: SourcePosition(source: "postgres", position: "00000001"))
        #expect(try t.store.sourcePosition("postgres", of: "/b") == "00000001")
        #expect(
            try t.store.standings(of: ["/a", "/b", "/none"], source: "postgres").mapValues(\.position)
                == ["/a": "00000001", "/b": "00000001"])
        // A position recorded for some Realms only counts for them, where it is the later one.
        try t.store.recordSourcePosition(SourcePosition(source: "postgres", position: "00000003"), in: ["/b"])
        #expect(try t.store.sourcePosition("postgres", of: "/a") == "00000001")
        #expect(try t.store.sourcePosition("postgres", of: "/b") == "00000003")
        #expect(try t.store.latestPosition(from: "postgres") == "00000003")
        // A load's hand-off counts for all.
        try t.store.recordSourcePosition(SourcePosition(source: "postgres", position: "00000005"), origin: "pg")
        #expect(try t.store.sourcePosition("postgres", of: "/a") == "00000005")
        #expect(try t.store.sourcePosition("postgres", of: "/b") == "00000005")
        #expect(try t.store.holdsChanges(from: "postgres") && !t.store.holdsChanges(from: "sqlserver"))
        // Recorded once: only the position for /b alone is kept per Realm.
        #expect(try t.store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM source_position") } == 1)
    }

    /// Each writer keeps its own position of a source: two adapters on one store following two
    /// databases whose slots share a name have one source name (a probe's second database had all
    /// its changes skipped as replays, for good, under the other's position).
    @Test(arguments: StoreKind.all) func aSourcePositionIsKeptPerWriter(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/a")
        try t.store.addTaskSchema("/b")
        let insert = Instruction.insert(objectType: "Person", identity: "x", values: ["id": "x"])
        for (path, origin, position) in [("/a", "adapter:a", "0000000B"), ("/b", "adapter:b", "00000003")] {
            try t.store.apply(
                [insert], to: path, origin: origin, sourcePosition: SourcePosition(source: "pg:s", position: position))
        }
        #expect(try t.store.standings(of: ["/b"], source: "pg:s", origin: "adapter:b")["/b"]?.position == "00000003")
        #expect(try t.store.sourcePosition("pg:s", of: "/a", origin: "adapter:b") == "00000003")
        #expect(try t.store.latestPosition(from: "pg:s", origin: "adapter:b") == "00000003")
        #expect(try t.store.latestPosition(from: "pg:s", origin: "adapter:a") == "0000000B")
        #expect(try t.store.holdsChanges(from: "pg:s", origin: "adapter:b"))
        #expect(try !t.store.holdsChanges(from: "pg:s", origin: "adapter:c"))
        try t.store.recordSourcePosition(SourcePosition(source: "pg:s", position: "00000005"), origin: "adapter:b")
        #expect(try t.store.latestPosition(from: "pg:s", origin: "adapter:b") == "00000005")
        #expect(try t.store.latestPosition(from: "pg:s", origin: "adapter:a") == "0000000B")
    }

    @Test(arguments: [
        "relative", "/a//b", "/a/../b", "/a/./b", "/trailing/", "/", "/bad\\slash", "/a/..", "/.", "/a\u{1}b",
        "/a\u{7F}",
        "/" + String(repeating: "x", count: 1024), "/a//\u{301}b", "/cafe\u{301}/x", "/\u{212B}",
    ])
    func rejectsInvalidPaths(path: String) throws {
        let t = try TemporaryStore()
        #expect {
            try t.store.apply([.clear(objectType: "X")], to: path, origin: "t")
        } throws: { ($0 as? RealmAdapterError)?.code == .invalidPath }
    }

    @Test(arguments: StoreKind.all) func acceptsDotsInNamesAndTextBeyondASCII(_ kind: StoreKind) throws {
        // A path is its bytes, as the store and templates see it: a combining mark after '/' does not hide it.
        for path in [
            "/...", "/.a/b.", "/a..b", "/é😀/x", "/\u{301}x", "/caf\u{E9}/x", "/" + String(repeating: "x", count: 1023),
        ] {
            #expect(throws: Never.self, "\(path)") { try RealmPath.validate(path) }
        }
        // The store lists paths byte by byte (a load reports its Realms in that order).
        let t = try TemporaryStore(kind)
        let paths = ["/b", "/a", "/é", "/Z", "/a/b", "/ab", "/a-b"]
        for path in paths { try t.store.apply([], to: path, origin: "t") }
        #expect(try t.store.realmPaths() == paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func listsAndReopensRealms() throws {
        let t = try TemporaryStore()
        try t.store.addTaskSchema("/u1/tasks")
        try t.store.addTaskSchema("/u2/tasks")
        try t.store.addTaskSchema("/u1")
        #expect(try t.store.realmPaths() == ["/u1", "/u1/tasks", "/u2/tasks"])
        let reopened = try RealmStore(directory: t.directory)
        #expect(try reopened.schema(of: "/u2/tasks") == (try Schema(taskSchema)))
        try reopened.deleteRealm("/u1")
        #expect(try reopened.realmPaths() == ["/u1/tasks", "/u2/tasks"])
        #expect(throws: RealmAdapterError.self) { try reopened.version(of: "/u1") }
    }

    @Test(arguments: StoreKind.all) func addingPropertiesFillsDefaultsIntoExistingObjects(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/s")
        try t.store.apply([.insert(objectType: "Person", identity: "a", values: ["id": "a"])], to: "/s", origin: "t")
        try t.store.apply(
            [
                .addProperties(
                    objectType: "Person",
                    properties: [
                        Property(name: "level", type: .scalar(.int), defaultValue: 3),
                        Property(name: "badges", type: .list(.scalar(.string))),
                    ])
            ], to: "/s", origin: "t")
        let a = try #require(try t.store.object(of: "Person", identity: "a", in: "/s"))
        #expect(a.values["level"] == 3)
        #expect(a.values["badges"] == [])
    }
}

extension StoreTests {
    @Test(arguments: StoreKind.all) func historyRecordsTypedValuesAndAppliedDefaults(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/h")
        // As a JSON file would give it: the date is a string until the schema types it.
        try t.store.apply(
            [.insert(objectType: "Task", identity: 5, values: ["id": 5, "title": "t", "due": "2024-05-01T12:00:00Z"])],
            to: "/h", origin: "t")
        let recorded = try #require(try t.store.history(of: "/h", after: 1).first?.instructions.first)
        #expect(
            recorded
                == .insert(
                    objectType: "Task", identity: 5,
                    values: [
                        "id": 5, "title": "t", "due": .date(Timestamp(seconds: 1_714_564_800)), "done": false,
                    ]))
    }
}

extension StoreTests {
    @Test(arguments: StoreKind.all) func typesOfOneTransactionMayReferToEachOtherInAnyOrder(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let task = ObjectSchema(
            name: "Task", primaryKey: "id",
            properties: [Property(name: "id", type: .scalar(.int)), Property(name: "owner", type: .link("Person"))])
        let person = ObjectSchema(
            name: "Person", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.string))])
        try t.store.apply(
            [
                .addType(task), .addType(person), .insert(objectType: "Person", identity: "a", values: ["id": "a"]),
                .insert(objectType: "Task", identity: 1, values: ["id": 1, "owner": "a"]),
            ], to: "/fwd", origin: "t")
        #expect(try t.store.object(of: "Task", identity: 1, in: "/fwd")?.values["owner"] == "a")
        #expect {
            try t.store.apply(
                [
                    .addType(
                        ObjectSchema(
                            name: "Dangling", primaryKey: "id",
                            properties: [
                                Property(name: "id", type: .scalar(.int)), Property(name: "to", type: .link("Nowhere")),
                            ]))
                ], to: "/fwd", origin: "t")
        } throws: {
            "\($0)".contains("Dangling.to: links to unknown type 'Nowhere'") && "\($0)".contains("nothing was applied")
        }
        #expect(try t.store.schema(of: "/fwd")[type: "Dangling"] == nil)
    }
}

/// INSERTs checked and encoded on another thread (the loader's fast path) must store and
/// record what the same INSERTs recorded one by one do (their records name every property,
/// in schema order, where one by one records what was given and the defaults that applied).
@Suite struct PreparedInsertsTests {
    static let item = ObjectSchema(
        name: "Item", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.int)), Property(name: "label", type: .scalar(.string)),
            Property(name: "price", type: .scalar(.double), isOptional: true),
            Property(name: "seats", type: .scalar(.int), defaultValue: .int(40)),
            Property(name: "when", type: .scalar(.date), isOptional: true),
        ])
    static let schema = try! Schema([item])

    static func rows(_ range: ClosedRange<Int64>) -> [(Value, PropertyValues)] {
        range.map { i in
            var v: PropertyValues = [
                "id": .int(i), "label": .string("item \(i)"), "price": i % 3 == 0 ? .null : .int(i),
            ]
            if i % 2 == 0 { v.append("when", .string("2024-01-0\(i % 9 + 1)T00:00:00Z")) }  // coerced to a date
            return (.int(i), v)
        }
    }

    @Test(arguments: StoreKind.all) func preparedInsertsStoreAndRecordWhatOneByOneDoes(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let s = t.store
        for path in ["/one", "/prepared"] { try s.write(to: path, origin: "test") { tx in try tx.addType(Self.item) } }
        // More rows than one statement takes (the dialect's rowsPerInsert), and fewer.
        let many = Int64(try s.backend.read { $0.dialect.rowsPerInsert } * 2 + 5)
        try s.write(to: "/one", origin: "test") { tx in
            for (id, v) in Self.rows(1...many) { try tx.record(.insert(objectType: "Item", identity: id, values: v)) }
            try tx.update("Item", 2, ["label": "two"])
            for (id, v) in Self.rows((many + 1)...(many + 4)) {
                try tx.record(.insert(objectType: "Item", identity: id, values: v))
            }
        }
        var first = try PreparedInserts(Self.item, schema: Self.schema)
        for (id, v) in Self.rows(1...many) { try first.add(id, v) }
        var second = try PreparedInserts(Self.item, schema: Self.schema)
        for (id, v) in Self.rows((many + 1)...(many + 4)) { try second.add(id, v) }
        try s.write(to: "/prepared", origin: "test") { tx in
            #expect(try tx.insert(first))
            try tx.update("Item", 2, ["label": "two"])
            #expect(try tx.insert(second))
        }
        #expect(try s.objects(of: "Item", in: "/prepared") == s.objects(of: "Item", in: "/one"))
        #expect(
            try s.history(of: "/prepared").map { $0.instructions.map(Self.complete) }
                == s.history(of: "/one").map { $0.instructions.map(Self.complete) })
        #expect(
            try s.history(of: "/prepared").map(\.instructions).joined().allSatisfy {
                if case .insert(_, _, let v) = $0 { v.map(\.name) == Self.item.properties.map(\.name) } else { true }
            })
        #expect(try s.object(of: "Item", identity: 1, in: "/prepared")?.values["seats"] == 40)
        #expect(try s.count(of: "Item", in: "/prepared") == Int(many) + 4)
        // The rows as the loader replays them when a Realm's type grew: the same objects.
        try s.write(to: "/replayed", origin: "test") { tx in
            try tx.addType(Self.item)
            try first.forEachRow { id, v in try tx.record(.insert(objectType: "Item", identity: id, values: v)) }
            try tx.update("Item", 2, ["label": "two"])
            try second.forEachRow { id, v in try tx.record(.insert(objectType: "Item", identity: id, values: v)) }
        }
        #expect(try s.objects(of: "Item", in: "/replayed") == s.objects(of: "Item", in: "/one"))
    }

    /// An INSERT of an `Item` with every property named, in schema order (null where not given).
    static func complete(_ i: Instruction) -> Instruction {
        guard case .insert(let t, let id, let v) = i else { return i }
        return .insert(
            objectType: t, identity: id,
            values: PropertyValues(item.properties.map { .init($0.name, v[$0.name] ?? .null) }))
    }

    /// In a full statement of rows (40), and in the shorter one for the rest (98, 100); on
    /// Postgres, inside one `COPY` of all of them.
    @Test(arguments: StoreKind.all, [40, 98, 100] as [Int64])
    func aDuplicateKeyInsideAMultiRowStatementIsNamed(_ kind: StoreKind, existing: Int64) throws {
        let t = try TemporaryStore(kind)
        try t.store.write(to: "/x", origin: "test") { tx in
            try tx.addType(Self.item)
            try tx.create("Item", ["id": .int(existing), "label": "already"])
        }
        var p = try PreparedInserts(Self.item, schema: Self.schema)
        for (id, v) in Self.rows(1...100) { try p.add(id, v) }
        #expect {
            try t.store.write(to: "/x", origin: "test") { tx in _ = try tx.insert(p) }
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.code == .duplicatePrimaryKey && e?.context["type"] == "Item"
                && "\(error)".contains("= \(existing)")
        }
        #expect(try t.store.count(of: "Item", in: "/x") == 1)
        #expect(try t.store.object(of: "Item", identity: .int(existing), in: "/x")?.values["label"] == "already")
    }

    /// An object is looked up through SQLite's API: a key no object can have is simply not there.
    @Test(arguments: StoreKind.all) func lookingUpAKeyNoObjectCanHaveFindsNothing(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.apply([.addType(Self.item)], to: "/x", origin: "test")
        #expect(try t.store.object(of: "Item", identity: 1, in: "/x") == nil)
        let keyed = ObjectSchema(
            name: "Tag", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.string))])
        try t.store.apply(
            [.addType(keyed), .insert(objectType: "Tag", identity: "a", values: ["id": "a"])], to: "/x", origin: "test")
        #expect(try t.store.object(of: "Tag", identity: "a\u{0}b", in: "/x") == nil)
        #expect(try t.store.object(of: "Tag", identity: "a", in: "/x")?.values["id"] == "a")
    }

    /// Runs of INSERTs are stored many rows per statement: the same objects and history as one by one.
    @Test(arguments: StoreKind.all) func insertRunsStoreWhatOneByOneStores(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let inserts = Self.rows(1...100).map { Instruction.insert(objectType: "Item", identity: $0.0, values: $0.1) }
        let set = Instruction.set(objectType: "Item", identity: 99, values: ["label": "x"])
        try t.store.apply([.addType(Self.item)] + inserts + [set], to: "/run", origin: "test")
        try t.store.apply([.addType(Self.item)], to: "/single", origin: "test")
        for i in inserts + [set] { try t.store.apply([i], to: "/single", origin: "test") }
        #expect(try t.store.objects(of: "Item", in: "/run") == t.store.objects(of: "Item", in: "/single"))
        let (run, single) = (try t.store.history(of: "/run"), try t.store.history(of: "/single"))
        #expect(run.flatMap(\.instructions) == single.flatMap(\.instructions))
        #expect(try t.store.object(of: "Item", identity: 7, in: "/run")?.values["seats"] == 40)
    }

    /// A failure inside a run of INSERTs names its instruction, and nothing of the run is stored.
    @Test(arguments: [
        (70, Instruction.insert(objectType: "Item", identity: 40, values: ["id": 40, "label": "again"]), "= 40"),
        (50, .insert(objectType: "Item", identity: 500, values: ["id": 500, "label": 5]), "expected string"),
        (33, .insert(objectType: "Item", identity: 5, values: ["id": 5, "label": "five"]), "= 5"),
        (99, .insert(objectType: "Item", identity: 1, values: ["id": 1, "label": "one"]), "= 1"),
        (10, .insert(objectType: "Item", identity: 3, values: ["id": 3, "label": "three"]), "= 3"),
    ])
    func aFailureInsideAnInsertRunNamesItsInstruction(index: Int, bad: Instruction, says: String) throws {
        let t = try TemporaryStore()
        try t.store.apply([.addType(Self.item)], to: "/x", origin: "test")
        var run = Self.rows(1...100).map { Instruction.insert(objectType: "Item", identity: $0.0, values: $0.1) }
        run[index] = bad
        #expect {
            try t.store.apply(run, to: "/x", origin: "test")
        } throws: { error in
            (error as? RealmAdapterError)?.context["instruction"] == "\(index)" && "\(error)".contains(says)
        }
        #expect(try t.store.count(of: "Item", in: "/x") == 0)
        #expect(try t.store.version(of: "/x") == 1)
    }

    static let owner = ObjectSchema(
        name: "Owner", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.string))])
    static let pet = ObjectSchema(
        name: "Pet", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.int)), Property(name: "owner", type: .link("Owner")),
            Property(name: "vet", type: .link("Owner")),
        ])
    static let petSchema = try! Schema([owner, pet])

    /// Pets 1…100, each linking to an owner of `owners` (`vet` null for every third).
    static func pets(_ owners: [String]) -> [(Value, PropertyValues)] {
        (1...100).map { i in
            (
                .int(Int64(i)),
                ["id": .int(Int64(i)), "owner": .string(owners[i % owners.count]), "vet": i % 3 == 0 ? .null : "a"]
            )
        }
    }

    static func withOwners(_ t: TemporaryStore, _ path: String) throws {
        try t.store.write(to: path, origin: "test") { tx in
            try tx.addType(Self.owner)
            try tx.addType(Self.pet)
            for o in ["a", "b", "c"] { try tx.create("Owner", ["id": .string(o)]) }
        }
    }

    /// Link targets are looked up many at a time: among 1,203 owners, one missing anywhere (in a
    /// full lookup, in the last, padded one, or a key repeated) is found, and nothing is stored.
    @Test(arguments: StoreKind.all, [nil, 0, 499, 700, 1202] as [Int?])
    func oneMissingTargetAmongManyIsFound(_ kind: StoreKind, missing: Int?) throws {
        let t = try TemporaryStore(kind)
        let owners = (0..<1203).map { "o\($0)" }
        try t.store.write(to: "/many", origin: "test") { tx in
            try tx.addType(Self.owner)
            try tx.addType(Self.pet)
            for (i, o) in owners.enumerated() where i != missing { try tx.create("Owner", ["id": .string(o)]) }
        }
        var pets = try PreparedInserts(Self.pet, schema: Self.petSchema)
        for (i, o) in owners.enumerated() {
            // Every owner twice: as owner, and as the next pet's vet.
            let vet: Value = i > 0 ? .string(owners[i - 1]) : .null
            try pets.add(.int(Int64(i)), ["id": .int(Int64(i)), "owner": .string(o), "vet": vet])
        }
        let stored = try t.store.write(to: "/many", origin: "test") { tx in try tx.insert(pets) }
        #expect(stored.result == (missing == nil))
        #expect(try t.store.count(of: "Pet", in: "/many") == (missing == nil ? owners.count : 0))
    }

    /// Types with links are prepared too: the links are stored as one by one stores them, and a
    /// batch with a link whose target is missing stores nothing (the loader then takes the rows
    /// one by one, deciding what a missing target means).
    @Test(arguments: StoreKind.all) func preparedLinksAreCheckedBeforeAnyRowIsStored(_ kind: StoreKind) throws {
        #expect(PreparedInserts.canPrepare(Self.pet))
        let t = try TemporaryStore(kind)
        for path in ["/one", "/prepared", "/dangling"] { try Self.withOwners(t, path) }
        var good = try PreparedInserts(Self.pet, schema: Self.petSchema)
        for (id, v) in Self.pets(["a", "b", "c"]) { try good.add(id, v) }
        try t.store.write(to: "/prepared", origin: "test") { tx in
            let stored = try tx.insert(good)
            #expect(stored)
        }
        try t.store.write(to: "/one", origin: "test") { tx in
            for (id, v) in Self.pets(["a", "b", "c"]) {
                try tx.record(.insert(objectType: "Pet", identity: id, values: v))
            }
        }
        #expect(try t.store.objects(of: "Pet", in: "/prepared") == t.store.objects(of: "Pet", in: "/one"))
        #expect(try t.store.object(of: "Pet", identity: 3, in: "/prepared")?.values["owner"] == "a")
        // A link to a missing owner in the last row of the last statement.
        var dangling = try PreparedInserts(Self.pet, schema: Self.petSchema)
        for (id, v) in Self.pets(["a", "b", "c"]).dropLast() { try dangling.add(id, v) }
        try dangling.add(.int(100), ["id": .int(100), "owner": "nobody"])
        try t.store.write(to: "/dangling", origin: "test") { tx in
            let stored = try tx.insert(dangling)
            #expect(!stored)
        }
        #expect(try t.store.count(of: "Pet", in: "/dangling") == 0)
        // Deleting an owner nulls the prepared links to it, as for links stored one by one.
        try t.store.apply([.delete(objectType: "Owner", identity: "a")], to: "/prepared", origin: "test")
        #expect(try t.store.object(of: "Pet", identity: 3, in: "/prepared")?.values["owner"] == .null)
        #expect(try t.store.object(of: "Pet", identity: 1, in: "/prepared")?.values["vet"] == .null)
    }

    /// A run of INSERTs with links, stored many rows per statement, refuses a missing target.
    @Test(arguments: StoreKind.all) func anInsertRunRefusesALinkToAMissingTarget(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try Self.withOwners(t, "/x")
        var run = Self.pets(["a", "b", "c"]).map { Instruction.insert(objectType: "Pet", identity: $0.0, values: $0.1) }
        run[70] = .insert(objectType: "Pet", identity: 71, values: ["id": 71, "owner": "a", "vet": "nobody"])
        #expect {
            try t.store.apply(run, to: "/x", origin: "test")
        } throws: { error in
            (error as? RealmAdapterError)?.context["instruction"] == "70" && "\(error)".contains("Pet.vet")
        }
        #expect(try t.store.count(of: "Pet", in: "/x") == 0)
        run[70] = .insert(objectType: "Pet", identity: 71, values: ["id": 71, "owner": "a"])
        try t.store.apply(run, to: "/x", origin: "test")
        #expect(try t.store.count(of: "Pet", in: "/x") == 100)
        #expect(try t.store.object(of: "Pet", identity: 71, in: "/x")?.values["vet"] == .null)
    }

    @Test(arguments: StoreKind.all) func badRowsAreRejectedAsOneByOne(_ kind: StoreKind) throws {
        var p = try PreparedInserts(Self.item, schema: Self.schema)
        #expect(throws: RealmAdapterError.self) { try p.add(.int(1), ["id": .int(1), "label": .int(5)]) }
        #expect(throws: RealmAdapterError.self) { try p.add(.int(1), ["id": .int(1)]) }  // label is required
        try p.add(.int(1), ["id": .int(1), "label": "a"])
        let t = try TemporaryStore(kind)
        try t.store.write(to: "/x", origin: "test") { tx in
            try tx.addType(Self.item)
            try tx.create("Item", ["id": 1, "label": "already"])
        }
        // A duplicate key rejects the whole transaction.
        #expect(throws: RealmAdapterError.self) {
            try t.store.write(to: "/x", origin: "test") { tx in _ = try tx.insert(p) }
        }
        #expect(try t.store.object(of: "Item", identity: 1, in: "/x")?.values["label"] == "already")
        // A Realm whose type grew takes them one by one instead.
        try t.store.write(to: "/y", origin: "test") { tx in
            try tx.addType(Self.item)
            try tx.addProperties([Property(name: "extra", type: .scalar(.int), isOptional: true)], to: "Item")
            #expect(try !tx.insert(p))
        }
        #expect(try t.store.count(of: "Item", in: "/y") == 0)
    }

    /// Upserts in a run (after one that created, the next tries its INSERT first) record and
    /// refuse exactly what each records and refuses alone.
    @Test(arguments: StoreKind.all) func upsertsInARunRecordWhatEachDoesAlone(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/u")
        try t.store.write(to: "/u", origin: "test") { tx in
            try tx.upsert("Person", "p1", ["id": "p1", "name": "Ann"])
            try tx.upsert("Person", "p2", ["id": "p2", "name": "Bob"])
            try tx.upsert("Person", "p1", ["id": "p1", "name": "Ann"])  // as it is: nothing
            try tx.upsert("Task", 1, ["id": 1, "title": "a", "owner": "p1", "tags": .list(["x"])])
            try tx.upsert("Task", 1, ["id": 1, "title": "b", "owner": "p1"])  // its key exists
            try tx.upsert("Task", 2, ["id": 2, "title": "c", "owner": nil])
            try tx.upsert("Task", 2, ["id": 2, "done": true])  // exists; as an INSERT it lacks a title
            try tx.upsert("Task", 3, ["id": 3, "title": "d", "owner": "p2"])
            try tx.upsert("Person", "p2", ["name": "Bea"])  // no key among the values
        }
        let recorded = try t.store.history(of: "/u", after: 1).flatMap(\.instructions)
        #expect(
            recorded == [
                .insert(objectType: "Person", identity: "p1", values: ["id": "p1", "name": "Ann"]),
                .insert(objectType: "Person", identity: "p2", values: ["id": "p2", "name": "Bob"]),
                .insert(
                    objectType: "Task", identity: 1,
                    values: ["id": 1, "title": "a", "owner": "p1", "tags": .list(["x"]), "done": false]),
                .set(objectType: "Task", identity: 1, values: ["title": "b"]),
                .insert(objectType: "Task", identity: 2, values: ["id": 2, "title": "c", "owner": nil, "done": false]),
                .set(objectType: "Task", identity: 2, values: ["done": true]),
                .insert(
                    objectType: "Task", identity: 3, values: ["id": 3, "title": "d", "owner": "p2", "done": false]),
                .set(objectType: "Person", identity: "p2", values: ["name": "Bea"]),
            ])
        #expect(try t.store.list("tags", of: "Task", identity: 1, in: "/u") == ["x"])
        // A new object that cannot be created is refused as a lone upsert's is, whether it
        // follows an upsert that created (INSERT first) or one that updated (read first).
        for bad: PropertyValues in [
            ["id": 9, "title": "e", "owner": "nobody"], ["id": 9, "title": "e", "due": "soon"],
            ["id": 9, "title": "e", "watchers": .list(["nobody"])], ["id": 9],
        ] {
            func refusal(after first: PropertyValues) throws -> String {
                do {
                    try t.store.write(to: "/u", origin: "test") { tx in
                        try tx.upsert("Person", first["id"]!, first)
                        try tx.upsert("Task", 9, bad)
                    }
                } catch let e as RealmAdapterError {
                    return e.description
                }
                Issue.record("upserting \(bad) was not refused")
                return ""
            }
            let inRun = try refusal(after: ["id": "p8"])
            #expect(inRun == (try refusal(after: ["id": "p1", "name": "Ann2"])))
            #expect(inRun.contains("INSERT"), "\(inRun)")
        }
        #expect(try t.store.object(of: "Task", identity: 9, in: "/u") == nil)
        #expect(try t.store.object(of: "Person", identity: "p8", in: "/u") == nil)
    }
}
