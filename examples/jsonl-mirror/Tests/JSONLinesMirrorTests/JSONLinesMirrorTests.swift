import Foundation
import JSONLinesMirror
import RealmAdapter
import Testing

@Suite struct JSONLinesMirrorTests {
    let root = NSTemporaryDirectory() + "jsonl-mirror-tests/\(UUID().uuidString.prefix(8))"

    func lines(_ file: String) throws -> [JSONValue] {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map {
            try JSONValue(parsing: String($0))
        }
    }

    func task(_ id: Int64) -> Instruction { .insert(objectType: "Task", identity: .int(id), values: ["id": .int(id)]) }

    @Test func mirrorsEveryFollowedRealmExactlyOnce() throws {
        let store = try RealmStore(directory: root + "/store")
        let addTask = Instruction.addType(
            ObjectSchema(name: "Task", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))]))
        try store.apply([addTask, task(1)], to: "/u1/tasks", origin: "app")
        try store.apply([addTask], to: "/u2/tasks", origin: "app")
        try store.apply([addTask], to: "/other", origin: "app")
        let out = root + "/out"
        let mirror = JSONLinesMirror(
            adapter: try Adapter(store: store, name: "mirror", pathRegex: "^/[^/]+/tasks$"), outputDirectory: out)
        #expect(try mirror.drainAll() == 2)
        try store.apply([task(2)], to: "/u1/tasks", origin: "app")
        #expect(try mirror.drainAll() == 1)
        let u1 = try lines(out + "/u1/tasks.jsonl")
        #expect(u1.map { $0["version"] } == [.int(1), .int(1), .int(2)])
        #expect(u1.map { $0["instruction"]?["type"] } == ["ADD_TYPE", "INSERT", "INSERT"])
        #expect(!FileManager.default.fileExists(atPath: out + "/other.jsonl"))

        // A crash after writing but before advance: a new mirror process replays the transaction,
        // and the version check keeps it from being written twice.
        try store.apply([task(3)], to: "/u1/tasks", origin: "app")
        let replaying = try Adapter(
            store: RealmStore(directory: root + "/store"), name: "mirror", pathRegex: "^/[^/]+/tasks$")
        let pending = try #require(try replaying.current("/u1/tasks"))
        let line = JSONValue.object([
            .init("version", .int(pending.version)), .init("instruction", pending.instructions[0].json()),
        ]).serialized()
        try (String(contentsOfFile: out + "/u1/tasks.jsonl", encoding: .utf8) + line + "\n").write(
            toFile: out + "/u1/tasks.jsonl", atomically: true, encoding: .utf8)
        #expect(try JSONLinesMirror(adapter: replaying, outputDirectory: out).drainAll() == 0)
        #expect(try lines(out + "/u1/tasks.jsonl").count == 4)
    }

    @Test(.timeLimit(.minutes(1)))
    func runsAsAServiceAndFollowsNewTransactions() async throws {
        let store = try RealmStore(directory: root + "/store")
        let out = root + "/out"
        let mirror = JSONLinesMirror(
            adapter: try Adapter(store: store, name: "live", pathRegex: ".*"), outputDirectory: out)
        let running = Task { try await mirror.run() }
        try await store.apply(
            [
                .addType(
                    ObjectSchema(
                        name: "Task", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))])),
                task(1),
            ],
            to: "/live", origin: "app")
        let file = out + "/live.jsonl"
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? lines(file).count) != 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        running.cancel()
        _ = await running.result
        let mirrored = try #require(try? lines(file), "the mirror wrote no file in 20 s")
        #expect(mirrored.map { $0["instruction"]?["type"] } == ["ADD_TYPE", "INSERT"])
        #expect(mirrored.map { $0["version"] } == [.int(1), .int(1)])
    }
}
