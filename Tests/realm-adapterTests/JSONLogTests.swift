import Foundation
import Testing

/// `--log-format json` (and `logFormat` in the configuration): one JSON object per line, with the
/// metadata as fields, for log shippers; secrets stay out, as in text.
@Suite struct JSONLogTests {
    let dir = NSTemporaryDirectory() + "realm-adapter-json-logs/\(UUID().uuidString.prefix(8))"
    static let password = "Js0nL0g-Secret"

    func config(format: String? = nil) throws -> String {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/adapter.json"
        let logFormat = format.map { #", "logFormat": "\#($0)""# } ?? ""
        try """
        {"realm": {"path": "/a", "store": "store"},
         "schema": [{"name": "A", "primaryKey": "id", "properties": {"id": "int"}}],
         "database": {"type": "postgres", "host": "127.0.0.1", "port": 1, "user": "u",
                      "password": "\(Self.password)", "connectTimeout": 1,
                      "retry": {"attempts": 2, "delayMs": 10}}\(logFormat)}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Each stderr line as a JSON object (the final error's line too).
    func objects(_ stderr: String) throws -> [[String: Any]] {
        try stderr.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    @Test func everyLineIsAJSONObjectWithTheMetadataAsFieldsAndNoSecret() async throws {
        let file = try config()
        let r = try await CLI.run(["run", "--config", file, "--log-format", "json", "--log-level", "debug"])
        #expect(r.status != 0, "nothing listens on port 1")
        let lines = try objects(r.stderr)
        #expect(lines.count >= 2, "\(r.stderr)")
        for line in lines {
            #expect(line["level"] is String && line["message"] is String && line["time"] is String)
            #expect(line["label"] as? String != nil)
        }
        #expect(lines.contains { $0["direction"] as? String == "start" && $0["attempt"] != nil }, "\(r.stderr)")
        #expect(!r.stderr.contains(Self.password) && !r.stdout.contains(Self.password))
    }

    @Test func theConfigurationChoosesTheFormatAndTheOptionWins() async throws {
        let json = try await CLI.run(["status", "--config", try config(format: "json"), "--log-level", "debug"])
        #expect(try !objects(json.stderr).isEmpty, "\(json.stderr)")
        let text = try await CLI.run(["status", "--config", try config(format: "json"), "--log-format", "text"])
        #expect(!text.stderr.split(separator: "\n").contains { $0.hasPrefix("{") }, "\(text.stderr)")
        let bad = try await CLI.run(["validate", "--config", try config(format: "yaml")])
        #expect(bad.status != 0 && bad.stderr.contains("logFormat"), "\(bad.stderr)")
    }
}

extension JSONLogTests {
    /// A configuration that does not parse is reported in the format the flag asks for: it came
    /// as a plain `error:` line, which a log shipper reading JSON dropped.
    @Test func aConfigurationErrorIsAJSONLineToo() async throws {
        let file = try config()
        try #"{"realm": {"path": "/a"}, "schema": [], "bogus": 1}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["status", "--config", file, "--log-format", "json"])
        #expect(r.status == 1)
        let lines = try objects(r.stderr)
        #expect(lines.count == 1 && (lines.first?["message"] as? String)?.contains("bogus") == true, "\(r.stderr)")
    }
}
