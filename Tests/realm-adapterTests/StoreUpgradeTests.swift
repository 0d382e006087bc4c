import Foundation
import TestSupport
import Testing

/// A store written by the release before the layout by type (tables per Realm: `r1_t0`, …) is
/// upgraded when a newer version opens it, and reads back the same objects and history.
@Suite struct StoreUpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/store-v3").path

    @Test func aStoreOfTheEarlierLayoutIsUpgradedAndReadsTheSame() async throws {
        let store = NSTemporaryDirectory() + "realm-adapter-upgrade-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: store) }
        try FileManager.default.copyItem(atPath: Self.fixture + "/realms.sqlite", toPath: store + "/realms.sqlite")

        let paths = ["/alice", "/team/bob"]
        var objects = ""
        var history = ""
        for path in paths {
            let dump = try await CLI.run(["realm", "dump", path, "--store", store])
            #expect(dump.status == 0, "\(dump.stderr)")
            objects += dump.stdout
            history += try await CLI.run(["realm", "history", path, "--store", store]).stdout
        }
        #expect(objects == (try String(contentsOfFile: Self.fixture + "/objects.json", encoding: .utf8)))
        #expect(history == (try String(contentsOfFile: Self.fixture + "/history.jsonl", encoding: .utf8)))
        let list = try await CLI.run(["realm", "list", "--store", store])
        #expect(
            list.stdout.contains("/alice  version 2  Person 2, Task 2, Note 1")
                && list.stdout.contains("/team/bob  version 1  Task 1"),
            "\(list.stdout)")

        // It goes on from there: a row key continues, a link and a list still work.
        let more = #"""
            [{"type": "INSERT", "object_type": "Note", "identity": 2, "values": {"text": "third", "about": 2}},
             {"type": "LIST_INSERT", "object_type": "Task", "identity": 1, "property": "tags", "list_index": 2, "value": "later"},
             {"type": "DELETE", "object_type": "Person", "identity": "bob"}]
            """#
        let apply = try await CLI.run(["realm", "apply", "/alice", "--store", store, "-f", "-"], stdin: more)
        #expect(apply.status == 0, "\(apply.stderr)")
        let after = try await CLI.run(["realm", "dump", "/alice", "--store", store]).stdout
        #expect(
            after.contains(#""tags":["home","today","later"]"#)
                && after.contains(#"{"_identity":2,"text":"third","about":2}"#), "\(after)")
        #expect(
            after.contains(#"{"_identity":"ann","name":"ann","friends":[],"age":41}"#),
            "bob left ann's friends: \(after)")
        #expect(after.contains(#""owner":null"#), "the link to bob became null: \(after)")
        #expect(
            try await CLI.run(["realm", "dump", "/team/bob", "--store", store]).stdout.contains(
                #""title":7,"tags":[3,1]"#))
    }
}
