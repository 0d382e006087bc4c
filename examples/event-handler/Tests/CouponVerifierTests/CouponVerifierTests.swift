import CouponVerifier
import Foundation
import RealmAdapter
import TestSupport
import Testing

@Suite struct CouponVerifierTests {
    func directory(_ name: String = #function) -> String {
        NSTemporaryDirectory() + "coupon-tests/\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))"
    }

    func coupon(_ code: String) -> Instruction {
        .insert(objectType: "Coupon", identity: .string(code), values: ["code": .string(code)])
    }

    func statuses(_ store: RealmStore, _ path: String) throws -> [String: Value] {
        Dictionary(
            uniqueKeysWithValues: try store.objects(of: "Coupon", in: path).map {
                (String(describing: $0.identity), $0.values["status"] ?? .null)
            })
    }

    /// Coupons an app creates are checked and the verdict written back, once: the handler's
    /// own write does not come back to it.
    @Test func couponsAreCheckedAndTheVerdictWrittenBack() async throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try RealmStore(directory: dir)
        let events = Counter()
        let handler = try CouponVerifier.handler(store: store, pathRegex: "^/shop$", valid: ["SAVE10"]) { _, _ in
            events.add()
        }
        try await store.apply(
            [.addType(CouponVerifier.schema), coupon("SAVE10"), coupon("FAKE")], to: "/shop", origin: "app")
        let task = Task { try await handler.run() }
        defer { task.cancel() }
        for _ in 0..<2000 where try statuses(store, "/shop").values.contains(.null) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try statuses(store, "/shop") == ["SAVE10": "valid", "FAKE": "invalid"])
        try await store.apply([coupon("LATE")], to: "/shop", origin: "app")
        for _ in 0..<2000 where try statuses(store, "/shop")["LATE"] == .null {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try statuses(store, "/shop")["LATE"] == "invalid")
        #expect(events.value == 2)  // the two app transactions; not the verdicts
    }

    /// The handler killed (SIGKILL) in the middle of an event of a backlog and started again: every
    /// event is handled at least once, in order, none skipped (the one cut short comes again),
    /// and every coupon ends checked.
    @Test func killedMidBacklogAndRestartedSkipsNothing() async throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try RealmStore(directory: dir)
        // Registered before the coupons are written, as a deployed handler is.
        _ = try CouponVerifier.handler(store: store, pathRegex: "^/shop", valid: [])
        try await store.apply([.addType(CouponVerifier.schema)], to: "/shop", origin: "app")
        for i in 0..<120 { try await store.apply([coupon("C\(i)")], to: "/shop", origin: "app") }
        let binary = ChildProcess.built("coupon-verifier")
        let out1 = dir + "/first.out"
        // It stops in the middle of event 40 (after writing its verdict back, before it returns).
        let first = try ChildProcess(
            binary, ["--store", dir, "--path-regex", "^/shop", "--delay-ms", "2", "--stall-at", "40"], stdout: out1)
        for _ in 0..<3000 where lines(out1).count < 39 { try await Task.sleep(for: .microseconds(10_000)) }
        try await Task.sleep(for: .microseconds(300_000))  // well inside event 40 by now
        first.signal(SIGKILL)
        #expect(await first.wait() == 128 + SIGKILL)
        let handledBefore = lines(out1)
        #expect(handledBefore.count == 39)
        let out2 = dir + "/second.out"
        let second = try ChildProcess(binary, ["--store", dir, "--path-regex", "^/shop"], stdout: out2)
        for _ in 0..<3000
        where try statuses(store, "/shop").values.contains(.null) || statuses(store, "/shop").count < 120 {
            try await Task.sleep(for: .microseconds(10_000))
        }
        second.signal(SIGTERM)
        #expect(await second.wait() == 0)
        let handledAfter = lines(out2)
        let versions = (handledBefore + handledAfter).compactMap { Int64($0.split(separator: " ")[2]) }
        // Versions 1 (the schema) to 121, each at least once; the restart resumes at or before
        // the first one not handled (at least once), never after it.
        #expect(Set(versions) == Set(1...121))
        let lastBefore = handledBefore.compactMap { Int64($0.split(separator: " ")[2]) }.max()!
        let firstAfter = handledAfter.compactMap { Int64($0.split(separator: " ")[2]) }.min()!
        #expect(firstAfter <= lastBefore + 1)
        #expect(try statuses(store, "/shop").values.allSatisfy { $0 == "invalid" })
    }

    func lines(_ file: String) -> [String] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}

/// A count shared with a handler.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.withLock { n += 1 } }
    var value: Int { lock.withLock { n } }
}
