import Testing

@testable import RealmAdapter

/// A database transaction's upserts of one type go as a run: the objects that exist are looked
/// up many at a time, the others stored many rows per statement. What it stores, records and
/// refuses is what upserting one by one does.
@Suite struct UpsertRunsTests {
    static let item = ObjectSchema(
        name: "Item", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.int)), Property(name: "name", type: .scalar(.string)),
            Property(name: "parent", type: .link("Item")),
            Property(name: "tags", type: .list(.scalar(.string))),
        ])

    /// Items `ids`, each linking to the one before it (`parent`), named `name`; item 45 gives tags.
    static func upserts(_ ids: ClosedRange<Int64>, name: String) -> [(identity: Value, values: PropertyValues)] {
        ids.map { i in
            var v: PropertyValues = ["id": .int(i), "name": .string(i % 3 == 0 ? "item \(i)" : name)]
            if i > 1 { v.append("parent", .int(i - 1)) }
            if i == 45 { v.append("tags", ["a", "b"]) }
            return (.int(i), v)
        }
    }

    /// Items 1…40 stored, then a run over 30…(two statements' worth): existing items changed
    /// and unchanged, new ones linking to those before them, one giving a list.
    @Test(arguments: StoreKind.all) func aRunStoresAndRecordsWhatOneByOneDoes(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let last = Int64(30 + RealmWriter.keysPerLookup + 70)
        for path in ["/run", "/each"] {
            try t.store.write(to: path, origin: "test") { tx in
                try tx.addType(Self.item)
                for u in Self.upserts(1...40, name: "old") { try tx.upsert("Item", u.identity, u.values) }
            }
        }
        try t.store.write(to: "/run", origin: "test") { tx in
            try tx.upsert("Item", each: Self.upserts(30...last, name: "new"))
        }
        try t.store.write(to: "/each", origin: "test") { tx in
            for u in Self.upserts(30...last, name: "new") { try tx.upsert("Item", u.identity, u.values) }
        }
        #expect(try t.store.count(of: "Item", in: "/run") == Int(last))
        #expect(try t.store.objects(of: "Item", in: "/run") == t.store.objects(of: "Item", in: "/each"))
        #expect(try t.store.list("tags", of: "Item", identity: 45, in: "/run") == ["a", "b"])
        let run = try t.store.history(of: "/run").last?.instructions
        #expect(run == (try t.store.history(of: "/each").last?.instructions))
        #expect(run?.count == Int(last) - 40 + 7, "SETs of the 7 existing items that change, INSERTs of the rest")
    }

    /// A row refused in a run (a link to an item no Realm holds: a new one, or an existing one
    /// after new ones) is refused as one by one refuses it, at the same instruction, and the
    /// transaction leaves nothing.
    @Test(arguments: StoreKind.all, [58, 80])
    func aRefusalInARunIsOneByOnesRefusal(_ kind: StoreKind, bad: Int) throws {
        let t = try TemporaryStore(kind)
        var upserts = Self.upserts(41...120, name: "new") + Self.upserts(35...35, name: "new")
        upserts[bad].values["parent"] = .int(9_999)  // item 99, new; item 35, existing
        var errors: [String] = []
        for (path, inRun) in [("/run", true), ("/each", false)] {
            try t.store.write(to: path, origin: "test") { tx in
                try tx.addType(Self.item)
                for u in Self.upserts(1...40, name: "old") { try tx.upsert("Item", u.identity, u.values) }
            }
            do {
                try t.store.write(to: path, origin: "test") { tx in
                    if inRun { try tx.upsert("Item", each: upserts) }
                    for u in upserts where !inRun { try tx.upsert("Item", u.identity, u.values) }
                }
                Issue.record("\(path): stored")
            } catch let e as RealmAdapterError {
                errors.append(e.description)
            }
            #expect(try t.store.count(of: "Item", in: path) == 40)
        }
        #expect(
            errors.count == 2 && errors[0] == errors[1].replacingOccurrences(of: "/each", with: "/run"), "\(errors)")
        #expect(errors.first?.contains("instruction \(bad)") == true, "\(errors)")
    }

    /// Runs of every length up to past 64 rows (stored in statements of a few lengths) store and
    /// record each row in order.
    @Test(arguments: StoreKind.all) func runsOfEveryLengthStoreEachRow(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.write(to: "/r", origin: "test") { tx in try tx.addType(Self.item) }
        var first: Int64 = 1
        for length: Int64 in 1...70 {
            let ids = first...(first + length - 1)
            try t.store.write(to: "/r", origin: "test") { tx in
                try tx.upsert("Item", each: Self.upserts(ids, name: "n"))
            }
            let recorded = try t.store.history(of: "/r").last?.instructions.map { i -> Value in
                guard case .insert(_, let id, _) = i else { return .null }
                return id
            }
            #expect(recorded == ids.map { .int($0) }, "\(length)")
            first += length
        }
        #expect(try t.store.count(of: "Item", in: "/r") == Int(first - 1))
        #expect(RealmWriter.largestPowerOfTwo(atMost: 63) == 32 && RealmWriter.largestPowerOfTwo(atMost: 2) == 2)
    }

    /// Through the daemon's applier: a run with a row the Realm refuses sets that row aside (or
    /// stops, naming its table and key) and applies the rest, as one by one did.
    @Test(arguments: StoreKind.all) func theApplierSetsARefusedRowOfARunAside(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let mapping = try MappingTests.routed(
            "/items", "Item", table: "item", properties: #"{"id": "int", "name": "string", "parent": "Item"}"#)
        let applier = RealmApplier(store: t.store, mapping: mapping, origin: "adapter:test", source: "pg")
        let rows = (1...80).map { i in
            RowChange.insert(
                table: "item",
                row: DatabaseRow([
                    "id": .int(Int64(i)), "name": .string("item \(i)"), "parent": i == 50 ? 9_999 : .null,
                ]))
        }
        let tx = DatabaseTransaction(position: "0001", isOwn: false, changes: rows, token: 1)
        #expect {
            try applier.apply(tx)
        } throws: { error in
            "\(error)".contains("Table item, row with key 50: the Realm refuses it")
        }
        #expect(try !t.store.contains("/items") || t.store.count(of: "Item", in: "/items") == 0)
        var aside: [SetAsideRow] = []
        #expect(try applier.apply(tx, setAside: { aside += $0 }) == ["/items"])
        #expect(aside.map(\.table) == ["item"] && aside.first?.error.contains("row with key 50") == true)
        #expect(try t.store.count(of: "Item", in: "/items") == 79)
        let inserts = try t.store.history(of: "/items").last?.instructions.filter {
            if case .insert = $0 { true } else { false }
        }
        #expect(inserts?.count == 79)
    }
}
