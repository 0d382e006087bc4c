import Foundation
import Logging
import ServiceLifecycle
import Testing

@testable import RealmAdapter

/// The event-handler API: order, own writes, retries that hold back one Realm only, dead letters.
@Suite struct EventHandlerTests {
    /// What a handler saw, as "path version".
    actor Seen {
        var events: [String] = []
        var failures: [String: Int] = [:]
        func add(_ e: ChangeEvent) { events.append("\(e.path) \(e.version)") }
        func fail(_ key: String) -> Int {
            failures[key, default: 0] += 1
            return failures[key]!
        }
    }

    static let fast: DatabaseConfiguration.Retry = {
        var r = DatabaseConfiguration.Retry()
        r.delayMs = 10
        r.maxDelayMs = 20
        return r
    }()

    func note(_ i: Int64) -> Instruction {
        .insert(objectType: "Note", identity: .int(i), values: ["text": .string("n\(i)")])
    }

    /// Runs `handler` until `done` holds (at most 60 s: at the start of the whole suite, hundreds
    /// of tests share two cores, and a CI run saw this wait pass 20 s), then stops it.
    func run(_ handler: EventHandler, until done: @escaping () async -> Bool) async throws {
        let task = Task { try await handler.run() }
        defer { task.cancel() }
        let deadline = ContinuousClock.now + .seconds(60)
        while await !done() {
            guard ContinuousClock.now < deadline else { throw ChildTimeout() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    struct ChildTimeout: Error {}

    @Test func eventsComeInOrderWithTheirChangesAndOwnWritesDoNotComeBack() async throws {
        let t = try TemporaryStore()
        let seen = Seen()
        let handler = try EventHandler(store: t.store, name: "h", pathRegex: "^/a$") { event in
            await seen.add(event)
            // The first note's event writes a second note back.
            if event.changes[type: "Note"]?.inserted.first?.identity == .int(1) {
                try event.write { try $0.create("Note", ["text": "reply"]) }
            }
        }
        try t.store.addTaskSchema("/a")
        try await t.store.apply([note(1)], to: "/a", origin: "app")
        try await run(handler) { await seen.events.count == 2 }
        try await t.store.apply([note(5)], to: "/a", origin: "app")  // version 4: 3 was the reply
        try await run(handler) { await seen.events.count == 3 }
        let events = await seen.events
        #expect(events == ["/a 1", "/a 2", "/a 4"])
        #expect(try t.store.version(of: "/a") == 4)
    }

    /// A handler whose path filter grows follows the Realms it now takes from their current
    /// versions, as a new handler does: a probe widened a webhook's `pathRegex` and got a dead
    /// letter for every earlier version of the Realm it took in ("written before an event handler
    /// followed the Realm"), and `status` warned about them for good.
    @Test func aWiderPathFilterTakesInRealmsAtTheirCurrentVersions() async throws {
        let t = try TemporaryStore()
        let seen = Seen()
        try t.store.addTaskSchema("/one")
        try t.store.addTaskSchema("/two")
        for i in 1...5 { try await t.store.apply([note(Int64(i))], to: "/two", origin: "app") }
        _ = try EventHandler(store: t.store, name: "h", pathRegex: "^/one$") { _ in }
        let wider = try EventHandler(store: t.store, name: "h", pathRegex: "^/(one|two)$", retry: Self.fast) { event in
            await seen.add(event)
        }
        try await t.store.apply([note(6)], to: "/two", origin: "app")
        try await run(wider) { await seen.events.count == 1 }
        #expect(await seen.events == ["/two 7"])
        #expect(try wider.lag().deadLetters.isEmpty)
    }

    @Test func aHandlerThatSeesItsOwnWritesGetsThem() async throws {
        let t = try TemporaryStore()
        let seen = Seen()
        let handler = try EventHandler(store: t.store, name: "h", pathRegex: "^/a$", seesOwnWrites: true) { event in
            await seen.add(event)
            if event.version == 1 { try event.write { try $0.create("Note", ["text": "reply"]) } }
        }
        try await t.store.apply([.addType(taskSchema[2]), note(1)], to: "/a", origin: "app")
        try await run(handler) { await seen.events.count == 2 }
        let events = await seen.events
        #expect(events == ["/a 1", "/a 2"])
    }

    /// A failing handler gets the same event again after a backoff; meanwhile the other Realms'
    /// events go on, and the failing Realm's later events wait for it.
    @Test func aFailingRealmIsRetriedAndHoldsBackOnlyItself() async throws {
        let t = try TemporaryStore()
        let seen = Seen()
        let handler = try EventHandler(store: t.store, name: "h", pathRegex: "^/", retry: Self.fast) { event in
            if event.path == "/bad", event.version == 1, await seen.fail("/bad 1") < 3 {
                throw CocoaError(.fileReadUnknown)
            }
            await seen.add(event)
        }
        for p in ["/bad", "/good"] { try await t.store.apply([.addType(taskSchema[2])], to: p, origin: "app") }
        try await t.store.apply([note(1)], to: "/bad", origin: "app")
        try await t.store.apply([note(1)], to: "/good", origin: "app")
        try await run(handler) { await seen.events.count == 4 }
        let events = await seen.events
        #expect(events.filter { $0.hasPrefix("/bad") } == ["/bad 1", "/bad 2"])
        #expect(events.filter { $0.hasPrefix("/good") } == ["/good 1", "/good 2"])
        #expect(events.firstIndex(of: "/good 2")! < events.firstIndex(of: "/bad 1")!)
        let failures = await seen.failures
        #expect(failures["/bad 1"] == 3)
    }

    /// After `retry.attempts` failures the event is set aside, recorded, and the Realm goes on.
    @Test func anEventThatKeepsFailingIsSetAside() async throws {
        let t = try TemporaryStore()
        let seen = Seen()
        var retry = Self.fast
        retry.attempts = 2
        let handler = try EventHandler(store: t.store, name: "h", pathRegex: "^/a$", retry: retry) { event in
            if event.version == 1 {
                _ = await seen.fail("1")
                throw CocoaError(.fileReadUnknown)
            }
            await seen.add(event)
        }
        try await t.store.apply([.addType(taskSchema[2])], to: "/a", origin: "app")
        try await t.store.apply([note(1)], to: "/a", origin: "app")
        try await run(handler) { await seen.events.count == 1 }
        let (events, failures) = (await seen.events, await seen.failures)
        #expect(events == ["/a 2"] && failures["1"] == 2)
        let letters = try EventDeadLetter.all(in: t.store, handler: "h")
        #expect(letters.map { "\($0.path) \($0.version) \($0.attempts)" } == ["/a 1 2"])
        #expect(letters.first?.error.isEmpty == false)
    }

    /// Dead letters come by path and version, as numbers (a probe found `@10` listed before `@9`,
    /// and `status` showing ten of eleven without saying so).
    @Test func deadLettersComeInVersionOrder() throws {
        let t = try TemporaryStore()
        for version in [9, 10, 2, 11] {
            try EventDeadLetter(handler: "h", path: "/a", version: Int64(version), attempts: 1, error: "x")
                .record(in: t.store)
        }
        try EventDeadLetter(handler: "h", path: "/0", version: 20, attempts: 1, error: "x").record(in: t.store)
        #expect(
            try EventDeadLetter.all(in: t.store, handler: "h").map { "\($0.path)@\($0.version)" }
                == ["/0@20", "/a@2", "/a@9", "/a@10", "/a@11"])
    }

    /// A Realm that never catches up (each event writes another transaction to it) does not
    /// starve the others: Realms take turns, a batch each.
    @Test func aBusyRealmDoesNotStarveTheOthers() async throws {
        let t = try TemporaryStore()
        let seen = Seen()
        let store = t.store
        let handler = try EventHandler(store: store, name: "h", pathRegex: "^/") { event in
            await seen.add(event)
            let quietDone = await seen.events.contains("/quiet 2")
            if event.path == "/busy", !quietDone {
                try await store.apply(
                    [.set(objectType: "Note", identity: .int(1), values: ["text": .string("v\(event.version)")])],
                    to: "/busy", origin: "app")
            }
        }
        try await store.apply([.addType(taskSchema[2]), note(1)], to: "/busy", origin: "app")
        for _ in 0..<100 {
            try await store.apply(
                [.set(objectType: "Note", identity: .int(1), values: ["text": "x"])], to: "/busy", origin: "app")
        }
        try await store.apply([.addType(taskSchema[2])], to: "/quiet", origin: "app")
        try await store.apply([note(1)], to: "/quiet", origin: "app")
        try await run(handler) { await seen.events.contains("/quiet 2") }
    }

    /// A graceful shutdown cancels the event in flight (a hung endpoint must not hold the stop);
    /// the event was not advanced past, so it comes again.
    @Test func aShutdownCancelsTheEventInFlightAndKeepsIt() async throws {
        let t = try TemporaryStore()
        let seen = Seen()
        let handler = try EventHandler(store: t.store, name: "h", pathRegex: "^/a$") { event in
            await seen.add(event)
            try await Task.sleep(for: .seconds(120))  // an endpoint that never answers
        }
        try await t.store.apply([.addType(taskSchema[2]), note(1)], to: "/a", origin: "app")
        let group = ServiceGroup(services: [handler], logger: Logger(label: "t"))
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            while await seen.events.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        // Well under the endpoint's 120 s, with room for a test process whose two cooperative
        // threads are held by other tests' blocking child processes (CI saw 12 s for this stop).
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(try handler.adapter.cursor("/a") == 0)
        #expect(try handler.adapter.pendingCount("/a") == 1)
    }
}
