import Testing

@testable import RealmAdapter

/// One store transaction over many Realms (a load of per-user Realms) looks them up and creates
/// them many at a time: existing and new ones mixed, more than one lookup takes, each with its
/// version, schema, history and an adapter's cursor, exactly as one Realm at a time.
@Suite struct ManyRealmsTests {
    static let todo = ObjectSchema(
        name: "Todo", primaryKey: "id",
        properties: [Property(name: "id", type: .scalar(.int)), Property(name: "title", type: .scalar(.string))])

    /// The summaries of a page of Realms (Studio's list) count only those Realms' objects, name
    /// their last change, leave out paths with no Realm, and agree with every Realm's summary.
    @Test(arguments: StoreKind.all) func summariesOfSomeRealmsAreThoseOfAll(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let s = t.store
        for i in 0..<5 {
            try s.apply([.addType(Self.todo)], to: "/u\(i)/it's", origin: "app")
            let todos = (0..<i).map {
                Instruction.insert(
                    objectType: "Todo", identity: .int(Int64($0)),
                    values: [
                        "id": .int(Int64($0)), "title": "t",
                    ])
            }
            if !todos.isEmpty { try s.apply(todos, to: "/u\(i)/it's", origin: "user:\(i)") }
        }
        let all = try s.summaries()
        #expect(all.map(\.path) == (0..<5).map { "/u\($0)/it's" })
        let some = try s.summaries(of: ["/u3/it's", "/nowhere", "/u0/it's"])
        #expect(some == [all[0], all[3]])
        #expect(some.map { $0.counts.map(\.count) } == [[0], [3]])
        #expect(some.map { $0.lastChange?.origin } == ["app", "user:3"])
        #expect(try s.summaries(of: []).isEmpty)
    }

    @Test(arguments: StoreKind.all) func manyRealmsAreFoundAndCreatedAsOneAtATime(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let s = t.store
        let loader = try Adapter(store: s, name: "loader", pathRegex: "^/")
        // Realms under /many are written in one transaction, under /each one at a time. Every
        // third exists already, at version 1, its cursor there for some; quotes in the paths.
        let count = RealmWriter.keysPerLookup * 2 + 203
        for prefix in ["/many", "/each"] {
            for i in stride(from: 0, to: count, by: 3) {
                try s.apply([.addType(Self.todo)], to: "\(prefix)/u\(i)/it's", origin: "app")
                if i % 2 == 0 { try loader.advance("\(prefix)/u\(i)/it's", through: 1) }
            }
        }
        func load(_ path: String, _ tx: inout WriteTransaction) throws {
            if tx.schema[type: "Todo"] == nil { try tx.addType(Self.todo) }
            try tx.create("Todo", ["id": 1, "title": .string(path)])
        }
        let many = (0..<count).map { "/many/u\($0)/it's" }
        let versions = try s.write(toEach: many, origin: "load", passing: [loader.id], load)
        for (i, p) in many.enumerated() {
            let one = "/each/u\(i)/it's"
            let version = try s.write(toEach: [one], origin: "load", passing: [loader.id], load)[0]
            #expect(versions[i] == version)
            #expect(versions[i] == (i % 3 == 0 ? 2 : 1))
            #expect(try s.version(of: p) == versions[i])
            #expect(try s.object(of: "Todo", identity: 1, in: p)?.values["title"] == .string(p))
            #expect(try s.history(of: p).count == s.history(of: one).count)
            #expect(try loader.cursor(p) == loader.cursor(one))
            #expect(try s.schema(of: p) == s.schema(of: one))
        }
        #expect(try s.realmPaths().count == count * 2)
        // A path named twice: its second part sees the first's writes.
        let twice = try s.apply(
            [
                RealmChanges(path: "/twice", instructions: [.addType(Self.todo)]),
                RealmChanges(
                    path: "/twice",
                    instructions: [.insert(objectType: "Todo", identity: 1, values: ["id": 1, "title": "x"])]),
            ], origin: "app")
        #expect(twice == [1, 2])
    }
}
