import Testing

@testable import RealmAdapter

/// INSERTs of a type with lists go many rows per statement too: a loader's rows (whose lists it
/// fills afterwards) are prepared, and a run of INSERTs stores the rows that give no list's
/// items together, each row that does alone, exactly as one by one.
@Suite struct InsertsWithListsTests {
    static let node = ObjectSchema(
        name: "Node", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.int)), Property(name: "name", type: .scalar(.string)),
            Property(name: "children", type: .list(.link("Node"))),
            Property(name: "tags", type: .list(.scalar(.string))),
        ])
    static let schema = try! Schema([node])

    /// Nodes 1…n; node 10 gives tags, node 20 children before it and itself, node 30 an empty list.
    static func run(_ n: Int64, children30: [Value] = []) -> [Instruction] {
        (1...n).map { i in
            var v: PropertyValues = ["id": .int(i), "name": .string("node \(i)")]
            if i == 10 { v.append("tags", ["a", "b"]) }
            if i == 20 { v.append("children", [5, 20, 19]) }
            if i == 30 { v.append("children", .list(children30)) }
            return .insert(objectType: "Node", identity: .int(i), values: v)
        }
    }

    @Test(arguments: StoreKind.all) func aRunWithListsStoresWhatOneByOneDoes(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let n = Int64(try t.store.backend.read { $0.dialect.rowsPerInsert } * 2 + 7)
        try t.store.apply([.addType(Self.node)] + Self.run(n), to: "/run", origin: "test")
        try t.store.write(to: "/each", origin: "test") { tx in
            try tx.addType(Self.node)
            for i in Self.run(n) { try tx.record(i) }
        }
        #expect(try t.store.count(of: "Node", in: "/run") == Int(n))
        #expect(try t.store.objects(of: "Node", in: "/run") == t.store.objects(of: "Node", in: "/each"))
        #expect(try t.store.list("children", of: "Node", identity: 20, in: "/run") == [5, 20, 19])
        #expect(try t.store.list("tags", of: "Node", identity: 10, in: "/run") == ["a", "b"])
        #expect(try t.store.history(of: "/run").last?.instructions == t.store.history(of: "/each").last?.instructions)
    }

    /// A child that comes later in the run is missing when its parent is stored, one by one or in a run.
    @Test(arguments: StoreKind.all) func aChildLaterInTheRunIsMissingAsOneByOne(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.apply([.addType(Self.node)], to: "/x", origin: "test")
        #expect {
            try t.store.apply(Self.run(100, children30: [31]), to: "/x", origin: "test")
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.code == .objectNotFound && e?.context["instruction"] == "29"
                && e?.context["property"] == "children"
        }
        #expect(try t.store.count(of: "Node", in: "/x") == 0)
    }

    /// A loader's rows of a type with lists are prepared; a row that gives a list's items is
    /// refused, naming the list, not stored without them.
    @Test(arguments: StoreKind.all) func preparedRowsOfATypeWithListsStoreAndRefuseItems(_ kind: StoreKind) throws {
        #expect(PreparedInserts.canPrepare(Self.node))
        var p = try PreparedInserts(Self.node, schema: Self.schema)
        for i in 1...100 { try p.add(.int(Int64(i)), ["id": .int(Int64(i)), "name": "n"]) }
        #expect {
            try p.add(101, ["id": 101, "name": "n", "tags": ["lost"]])
        } throws: { error in
            (error as? RealmAdapterError)?.context["property"] == "tags" && "\(error)".contains("Node.tags")
        }
        #expect(p.count == 100)
        let t = try TemporaryStore(kind)
        try t.store.write(to: "/x", origin: "test") { tx in
            try tx.addType(Self.node)
            #expect(try tx.insert(p))
            try tx.listAppend("Node", 7, "children", contentsOf: [1, 7])
        }
        #expect(try t.store.count(of: "Node", in: "/x") == 100)
        #expect(try t.store.list("children", of: "Node", identity: 7, in: "/x") == [1, 7])
        #expect(try t.store.list("tags", of: "Node", identity: 7, in: "/x") == [])
    }
}
