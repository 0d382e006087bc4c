import Foundation
import Testing

/// `realm apply` reads its file as a stream, in batches: a refusal deep in a large file names the
/// instruction's place in the whole transaction, and nothing of it is written.
@Suite struct ApplyStreamingTests {
    let dir = NSTemporaryDirectory() + "realm-adapter-apply/\(UUID().uuidString.prefix(8))"

    @Test func aRefusalPastTheFirstBatchNamesItsIndexAndWritesNothing() async throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let schema = #"{"type": "ADD_TYPE", "object_type": "T", "primary_key": "id", "properties": {"id": "int"}}"#
        let inserts = (1...2_500).map {
            #"{"type": "INSERT", "object_type": "T", "identity": \#($0), "values": {"id": \#($0)}}"#
        }
        var items = [schema] + inserts
        items[1_700] = #"{"type": "INSERT", "object_type": "T", "identity": "x", "values": {"id": "x"}}"#
        let file = dir + "/big.json"
        try ("[" + items.joined(separator: ",\n") + "]").write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["realm", "apply", "/t", "--store", dir + "/store", "--file", file])
        #expect(r.status == 1 && r.stderr.contains("instruction 1700"), "\(r.stderr)")
        items[1_700] = #"{"type": "INSERT", "object_type": "T", "identity": 1700, "values": {"id": 1700}}"#
        try ("[" + items.joined(separator: ",\n") + "]").write(toFile: file, atomically: true, encoding: .utf8)
        let ok = try await CLI.run(["realm", "apply", "/t", "--store", dir + "/store", "--file", file])
        #expect(ok.status == 0 && ok.stdout.contains("Applied 2501 instructions to /t; it is now at version 1."))
        // History holds every instruction, in order, across the batches it was recorded in.
        let history = try await CLI.run(["realm", "history", "/t", "--store", dir + "/store"])
        let line = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any]
        let recorded = line?["instructions"] as? [[String: Any]] ?? []
        #expect(recorded.count == 2_501)
        #expect(recorded.dropFirst().enumerated().allSatisfy { i, r in r["identity"] as? Int == i + 1 })
        #expect((recorded.last?["values"] as? [String: Any])?["id"] as? Int == 2_500)
    }
}
