import Foundation
import TestSupport
import Testing

/// Runs the real `realm-adapter` binary, as a user would.
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) async throws -> Result {
        let r = try await ChildProcess.run(
            ChildProcess.built("realm-adapter"), args, input: stdin,
            environment: ProcessInfo.processInfo.environment.merging(env) { _, new in new })
        return Result(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }
}

@Suite struct CLITests {
    let dir = NSTemporaryDirectory() + "realm-adapter-cli-tests/\(UUID().uuidString.prefix(8))"
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../examples"
    ).standardizedFileURL.path

    @Test func everyCommandHasHelp() async throws {
        for command in [
            [], ["validate"], ["realm"], ["realm", "list"], ["realm", "schema"], ["realm", "dump"],
            ["realm", "history"], ["realm", "apply"],
        ] {
            let r = try await CLI.run(command + ["--help"])
            #expect(r.status == 0, "\(command)")
            #expect(r.stdout.contains("USAGE"), "\(command)")
        }
        #expect(try await CLI.run(["realm", "apply", "--help"]).stdout.contains("LIST_INSERT"))
    }

    @Test func applyThenReadBack() async throws {
        let store = dir + "/store"
        let apply = try await CLI.run([
            "realm", "apply", "/demo", "--store", store, "--file", Self.examples + "/demo/1-schema-and-tasks.json",
        ])
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(apply.stdout.contains("now at version 1"))
        let list = try await CLI.run(["realm", "list", "--store", store])
        #expect(list.stdout.contains("/demo  version 1"))
        let dump = try await CLI.run(["realm", "dump", "/demo", "--store", store, "--type", "Task"])
        let json = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as! [String: [[String: Any]]]
        #expect(json["Task"]?.count == 3)
        let history = try await CLI.run(["realm", "history", "/demo", "--store", store])
        #expect(history.stdout.split(separator: "\n").count == 1)
        #expect(history.stdout.contains("\"origin\":\"cli\""))
        // History output is valid input to apply: replay it into a second Realm.
        let line = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as! [String: Any]
        let instructions = String(
            decoding: try JSONSerialization.data(withJSONObject: line["instructions"]!), as: UTF8.self)
        let replay = try await CLI.run(["realm", "apply", "/copy", "--store", store, "-f", "-"], stdin: instructions)
        #expect(replay.status == 0, "\(replay.stderr)")
        // Same objects (JSONSerialization above reordered properties, so compare parsed documents).
        func parsed(_ path: String) async throws -> NSDictionary {
            try JSONSerialization.jsonObject(
                with: Data(try await CLI.run(["realm", "dump", path, "--store", store]).stdout.utf8)) as! NSDictionary
        }
        #expect(try await parsed("/copy") == (try await parsed("/demo")))
    }

    @Test func badInputGetsAClearErrorAndChangesNothing() async throws {
        let store = dir + "/store"
        _ = try await CLI.run([
            "realm", "apply", "/demo", "--store", store, "--file", Self.examples + "/demo/1-schema-and-tasks.json",
        ])
        let bad =
            #"[{"type": "SET", "object_type": "Task", "identity": 1, "values": {"done": true}}, {"type": "DELETE", "object_type": "Task", "identity": 404}]"#
        let r = try await CLI.run(["realm", "apply", "/demo", "--store", store, "-f", "-"], stdin: bad)
        #expect(r.status == 1)
        #expect(r.stderr.contains("error: Transaction rejected, nothing was applied: instruction 1 (DELETE Task)"))
        #expect(try await CLI.run(["realm", "list", "--store", store]).stdout.contains("version 1"))
        let missing = try await CLI.run(["realm", "list", "--store", dir + "/nowhere"])
        #expect(missing.status == 1 && missing.stderr.contains("There is no Realm store"))
        let flag = try await CLI.run(["realm", "list", "--store", store, "--log-level", "chatty"])
        #expect(flag.status != 0 && flag.stderr.contains("Unknown log level 'chatty'"))
    }

    @Test func validateSummarizesAndNeverPrintsThePassword() async throws {
        let ok = try await CLI.run(
            ["validate", "--config", Self.examples + "/config/bus-postgres.json"], env: ["PGPASSWORD": "hunter2"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("Schedule") && ok.stdout.contains("foreign key Routeid → Route"))
        #expect(ok.stdout.contains("password from $PGPASSWORD"))
        #expect(!(ok.stdout + ok.stderr).contains("hunter2"))
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/bad.json"
        try #"{"realm": {"path": "/a"}, "schema": [], "database": {"type": "postgres", "host": "h", "port": "5432"}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try await CLI.run(["validate", "-c", file])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("database.port: expected an integer, found a string."))
    }

    /// A connector's own error prints as every error does (`error: …`, exit 1), whatever the
    /// connector: SQL Server's printed as ArgumentParser's `Error:` before.
    @Test func aConnectorsErrorPrintsLikeAnyOther() async throws {
        let refused = try await CLI.run(["init", "--database", "sqlserver://sa:SeCrEtPw1@127.0.0.1:1/app"])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("error: Cannot connect to SQL Server at 127.0.0.1:1/app"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("SeCrEtPw1") && !refused.stdout.contains("SeCrEtPw1"))
    }

    /// The connector is chosen by name through the registry: an unknown name is refused before
    /// anything connects, naming the known ones; the connector's own members show in the summary.
    @Test func theDatabaseTypeChoosesTheConnector() async throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/typed.json"
        let database = #""database": {"type": "postgres", "host": "h", "slotName": "shop", "sslmode": "require"}"#
        let schema = #""schema": [{"name": "A", "primaryKey": "id", "properties": {"id": "int"}}]"#
        try #"{"realm": {"path": "/a"}, \#(schema), \#(database)}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let ok = try await CLI.run(["validate", "-c", file])
        #expect(
            ok.status == 0 && ok.stdout.contains("postgres at h:5432")
                && ok.stdout.contains("slot shop, sslmode require"),
            "\(ok.stdout)\(ok.stderr)")
        let initialized = try await CLI.run(["init", "--database", "oracle://db/x", "--type", "oracle"])
        #expect(
            initialized.status != 0
                && initialized.stderr.contains(
                    #"unknown database type 'oracle' (expected "postgres", "sqlite" or "sqlserver")"#),
            "\(initialized.stderr)")
    }
}

extension CLITests {
    /// A daemon started while its database is unreachable retries as `database.retry` says, like
    /// a connection lost later, and then gives up saying so, without a password in its output.
    @Test(.timeLimit(.minutes(1)))
    func theStartRetriesAsConfiguredThenGivesUp() async throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/unreachable.json"
        try #"""
        {"realm": {"path": "/a", "store": "\#(dir)/store"},
         "schema": [{"name": "T", "primaryKey": "id", "properties": {"id": "int"}}],
         "database": {"type": "postgres", "host": "127.0.0.1", "port": 1, "user": "u", "database": "d",
                      "retry": {"attempts": 3, "delayMs": 10}}}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["run", "--config", file], env: ["PGPASSWORD": "hunter2"])
        let output = r.stdout + r.stderr
        #expect(r.status != 0)
        #expect(output.components(separatedBy: "retrying").count - 1 == 2, "\(output)")
        #expect(output.contains("Giving up after 3 attempts"), "\(output)")
        #expect(!output.contains("hunter2"))
    }

    /// Hostile values through `realm apply`: an error naming the instruction, exit 1, no crash.
    @Test(arguments: [
        #"{"type": "INSERT", "object_type": "Task", "identity": 9, "values": {"id": 9, "title": "t", "done": false, "due": "2024-05-01T12:00:00.1234567891Z"}}"#,
        #"{"type": "INSERT", "object_type": "Task", "identity": 9, "values": {"id": 9, "title": "t", "done": false, "due": "2024-02-30T12:00:00Z"}}"#,
        #"{"type": "INSERT", "object_type": "Task", "identity": 9, "values": {"id": 9, "title": "a\u0000b", "done": false}}"#,
    ])
    func hostileValuesAreRejectedByApply(instruction: String) async throws {
        let store = dir + "/store"
        let schema = try await CLI.run([
            "realm", "apply", "/demo", "--store", store, "--file", Self.examples + "/demo/1-schema-and-tasks.json",
        ])
        #expect(schema.status == 0, "\(schema.stderr)")
        let r = try await CLI.run(
            ["realm", "apply", "/demo", "--store", store, "-f", "-"], stdin: "[" + instruction + "]")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains("instruction 0"), "\(r.stderr)")
    }
}

extension CLITests {
    /// `validate` catches what would fail later, before anything touches the database.
    @Test(arguments: [
        (#"[{"name": "Bus", "properties": {"vehicle": "int"}}]"#, "", "Bus", "primary key"),
        ("[]", "", "schema", "no object types"),
        (
            #"[{"name": "Bus", "primaryKey": "id", "properties": {"id": "int"}}]"#, #", "slotName": "Bad-Slot""#,
            "database.slotName", "lower-case letters"
        ),
        (
            #"[{"name": "Bus", "primaryKey": "id", "properties": {"id": "int"}}]"#, #", "url": "not a url""#,
            "database.url", "URL"
        ),
        (
            #"[{"name": "Bus", "primaryKey": "id", "properties": {"id": "int"}}]"#,
            #", "url": "postgresql://u:pw@db/app", "port": 5433"#, "database.port", "not both"
        ),
    ])
    func validateRejectsConfigurationsThatCannotWork(schema: String, database: String, place: String, reason: String)
        async throws
    {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/adapter.json"
        let host = database.contains("url") ? "" : #", "host": "db""#
        try """
        {"realm": {"path": "/SQLDemo"}, "database": {"type": "postgres"\(host)\(database)}, "schema": \(schema)}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["validate", "-c", file])
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stderr.contains(place) && r.stderr.contains(reason), "\(r.stderr)")
    }
}
