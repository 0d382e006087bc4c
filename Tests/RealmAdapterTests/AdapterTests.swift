import Foundation
import Testing

@testable import RealmAdapter

@Suite struct AdapterTests {
    func person(_ id: String) -> Instruction {
        .insert(objectType: "Person", identity: .string(id), values: ["id": .string(id)])
    }

    @Test(arguments: StoreKind.all) func replaysUntilAdvancedAndIsNilWhenCaughtUp(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/a")
        try t.store.apply([person("x")], to: "/a", origin: "app")
        let adapter = try Adapter(store: t.store, name: "mirror", pathRegex: "^/a$")
        let first = try #require(try adapter.current("/a"))
        #expect(first.version == 1 && first.instructions.count == taskSchema.count)
        #expect(try adapter.current("/a") == first)  // same until advanced
        try adapter.advance("/a")
        #expect(try adapter.current("/a")?.instructions == [person("x")])
        try adapter.advance("/a")
        #expect(try adapter.current("/a") == nil)
        try adapter.advance("/a")  // advancing when caught up is harmless
        #expect(try adapter.cursor("/a") == 2)
    }

    /// The Realms with something to send, found by one query: caught-up Realms, Realms with only
    /// the adapter's own transactions and Realms it does not follow are left out.
    @Test(arguments: StoreKind.all) func pendingCountsNameOnlyRealmsWithSomethingToSend(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        let adapter = try Adapter(store: t.store, name: "mirror", pathRegex: "^/u")
        for i in 0..<300 {
            try t.store.addTaskSchema("/u\(i)")
            guard i % 3 != 2 else { continue }  // its schema transaction left to send
            _ = try adapter.current("/u\(i)")
            try adapter.advance("/u\(i)")  // caught up
            // then its own only
            if i % 3 == 1 { try t.store.apply([person("x")], to: "/u\(i)", origin: adapter.origin) }
        }
        try t.store.apply([person("z")], to: "/u3", origin: "app")
        try t.store.addTaskSchema("/other")
        let counts = try adapter.pendingCounts()
        #expect(counts.map(\.path) == (0..<300).filter { $0 % 3 == 2 || $0 == 3 }.map { "/u\($0)" }.sorted())
        #expect(counts.first { $0.path == "/u3" }?.count == 1 && counts.first { $0.path == "/u2" }?.count == 1)
        for (path, count) in counts { #expect(try adapter.pendingCount(path) == count, "\(path)") }
    }

    @Test func cursorsAreDurablePerAdapterName() throws {
        let t = try TemporaryStore()
        try t.store.addTaskSchema("/a")
        try t.store.apply([person("x")], to: "/a", origin: "app")
        do {
            let adapter = try Adapter(store: t.store, name: "one", pathRegex: ".*")
            _ = try adapter.current("/a")
            try adapter.advance("/a")
        }
        // A new process: same directory, new store and adapter objects.
        let store = try RealmStore(directory: t.directory)
        #expect(try Adapter(store: store, name: "one", pathRegex: ".*").current("/a")?.version == 2)
        #expect(try Adapter(store: store, name: "two", pathRegex: ".*").current("/a")?.version == 1)
    }

    @Test(arguments: StoreKind.all) func pathFilterSelectsRealms(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        for p in ["/u1/myRealm", "/u2/myRealm", "/u1/other", "/myRealm"] { try t.store.addTaskSchema(p) }
        let adapter = try Adapter(store: t.store, name: "per-user", pathRegex: "^/(.*?)/myRealm$")
        #expect(try adapter.paths() == ["/u1/myRealm", "/u2/myRealm"])
        #expect(try adapter.current("/u1/other") == nil)
        #expect(throws: RealmAdapterError.self) { try Adapter(store: t.store, name: "bad", pathRegex: "([unclosed") }
    }

    @Test(arguments: StoreKind.all) func ownWritesAreNeverReturnedToTheWriter(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/e")
        let a = try Adapter(store: t.store, name: "a", pathRegex: ".*")
        let b = try Adapter(store: t.store, name: "b", pathRegex: ".*")
        _ = try a.current("/e")
        try a.advance("/e")
        try a.realm(at: "/e").apply([person("from-a-1")])
        try a.realm(at: "/e").apply([person("from-a-2")])
        try t.store.apply([person("from-app")], to: "/e", origin: "app")
        try a.realm(at: "/e").write { tx in try tx.create("Person", ["id": "from-a-3"]) }
        // a sees only the app's write; b sees everything.
        #expect(try a.current("/e")?.instructions == [person("from-app")])
        try a.advance("/e")
        #expect(try a.current("/e") == nil)
        try a.advance("/e")  // moves past its own trailing write, so compaction can reclaim it
        #expect(try a.cursor("/e") == 5)
        var seen: [Instruction] = []
        while let tx = try b.current("/e") {
            seen += tx.instructions
            try b.advance("/e")
        }
        #expect(seen.suffix(4) == [person("from-a-1"), person("from-a-2"), person("from-app"), person("from-a-3")])
        #expect(try t.store.history(of: "/e").last?.origin == "adapter:a")
    }

    @Test(arguments: StoreKind.all) func notifiesOfPendingAndNewTransactions(_ kind: StoreKind) async throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/pending")
        let adapter = try Adapter(store: t.store, name: "n", pathRegex: "^/(pending|later)$")
        let paths = adapter.pathsWithChanges()
        var iterator = paths.makeAsyncIterator()
        #expect(await iterator.next() == "/pending")
        try t.store.addTaskSchema("/ignored")
        try t.store.addTaskSchema("/later")
        #expect(await iterator.next() == "/later")
    }

    @Test(arguments: StoreKind.all) func compactionKeepsWhatAnAdapterHasNotProcessed(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/c")
        for i in 0..<10 { try t.store.apply([person("p\(i)")], to: "/c", origin: "app") }
        // No adapter follows /c yet: nothing may be removed.
        #expect(try t.store.compact("/c") == 0)
        let slow = try Adapter(store: t.store, name: "slow", pathRegex: ".*", compactionInterval: 1_000)
        let fast = try Adapter(store: t.store, name: "fast", pathRegex: ".*", compactionInterval: 1_000)
        for _ in 0..<3 {
            _ = try slow.current("/c")
            try slow.advance("/c")
        }
        while try fast.current("/c") != nil { try fast.advance("/c") }
        #expect(try t.store.compact("/c") == 3)
        #expect(try t.store.history(of: "/c", after: 3).count == 8)
        #expect(throws: RealmAdapterError.self) { try t.store.history(of: "/c", after: 0) }
        // The slow adapter still gets everything it has not processed.
        var versions: [Int64] = []
        while let tx = try slow.current("/c") {
            versions.append(tx.version)
            try slow.advance("/c")
        }
        #expect(versions == Array(4...11))
        #expect(try t.store.compact("/c") == 8)
    }

    @Test(arguments: StoreKind.all) func historyStaysBoundedUnderARunningAdapter(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.addTaskSchema("/bounded")
        let adapter = try Adapter(store: t.store, name: "auto", pathRegex: ".*", compactionInterval: 16)
        for i in 0..<200 {
            try t.store.apply([person("p\(i)")], to: "/bounded", origin: "app")
            while try adapter.current("/bounded") != nil { try adapter.advance("/bounded") }
        }
        let kept = try t.store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM history") ?? 0 }
        #expect(kept <= 16)
    }
}
