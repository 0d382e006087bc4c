import Foundation
import TestSupport
import Testing

/// `realm-adapter events` and `status` for webhooks without a database.
@Suite struct EventsCLITests {
    let dir = NSTemporaryDirectory() + "realm-adapter-events-cli/\(UUID().uuidString.prefix(8))"

    func config(_ webhooks: String, schema: String = "[]") throws -> String {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let file = dir + "/events.json"
        try """
        {"realm": {"store": "\(dir)/store", "path": "/shop"}, "schema": \(schema),
         "events": {"webhooks": [\(webhooks)]}}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A webhook-only setup (no database section) gets its webhooks' part of `status`. Where
    /// there is no store yet, it says so and makes none: a probe's mistyped `realm.store` became a
    /// new, empty store, reported as all delivered.
    @Test func statusShowsWebhooksWithoutADatabase() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = try config(#"{"pathRegex": "^/shop$", "url": "http://127.0.0.1:1/hook"}"#)
        let r = try await CLI.run(["status", "--config", file])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("webhook http://127.0.0.1:1/hook: 0 transaction(s) to deliver"), "\(r.stdout)")
        #expect(r.stdout.contains("none there yet"), "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/store"))
    }

    /// A store with one Realm, as `realm apply` makes it.
    func makeStore() async throws {
        let instructions = dir + "/schema.json"
        try #"[{"type": "ADD_TYPE", "object_type": "Note", "properties": {"text": "string"}}]"#
            .write(toFile: instructions, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["realm", "apply", "/shop", "--store", dir + "/store", "--file", instructions])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// `events` on a store that is not there (a mistyped realm.store) says so and makes none: it
    /// made a new, empty store and delivered nothing, forever, without a word.
    @Test func eventsRefusesAStoreThatIsNotThere() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = try config(#"{"pathRegex": "^/shop$", "url": "http://127.0.0.1:1/hook"}"#)
        let r = try await CLI.run(["events", "--config", file])
        #expect(r.status == 1 && r.stderr.contains("There is no Realm store in"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/store"))
    }

    /// An empty webhook list is a configuration error (exit 1, `error: …`), not a usage error.
    @Test func noWebhooksIsAConfigurationError() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try await CLI.run(["events", "--config", try config("")])
        #expect(r.status == 1 && r.stderr.hasPrefix("error: events.webhooks is empty"), "\(r.stderr)")
    }

    /// A port the metrics endpoint cannot have says which port and which options.
    @Test func aMetricsPortInUseIsNamed() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = try config(#"{"pathRegex": "^/shop$", "url": "http://127.0.0.1:1/hook"}"#)
        try await makeStore()
        // Something listens on the port already: a first events process.
        let port = freePort()
        let first = try ChildProcess(
            ChildProcess.built("realm-adapter"), ["events", "--config", file, "--metrics-port", "\(port)"])
        defer {
            first.signal(SIGTERM)
            first.reap()
        }
        for _ in 0..<200 {
            let probe = try await ChildProcess.run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(port)/health/live"])
            if probe.stdout.contains("live") { break }
            try await Task.sleep(for: .microseconds(20_000))
        }
        let second = try await CLI.run(["events", "--config", file, "--metrics-port", "\(port)"])
        #expect(second.status == 1, "\(second.stderr)")
        #expect(
            second.stderr.contains("error: Cannot serve /metrics on 127.0.0.1:\(port) (--metrics-port"),
            "\(second.stderr)")
    }
}

extension EventsCLITests {
    /// `/health/ready` says when a webhook's deliveries fail (it answered ready while an endpoint
    /// refused every event), naming the webhook and the Realm; the endpoint's error is the log's.
    @Test func readinessFailsWhileAWebhookFails() async throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = try config(#"{"pathRegex": "^/shop$", "url": "http://127.0.0.1:1/hook", "name": "shop-hook"}"#)
        try await makeStore()
        let port = freePort()
        let events = try ChildProcess(
            ChildProcess.built("realm-adapter"), ["events", "--config", file, "--metrics-port", "\(port)"])
        defer {
            events.signal(SIGTERM)
            events.reap()
        }
        func ready() async throws -> String {
            try await ChildProcess.run(
                "/usr/bin/curl", ["-s", "-w", " %{http_code}", "http://127.0.0.1:\(port)/health/ready"]
            )
            .stdout
        }
        var answer = ""
        for _ in 0..<250 where !answer.hasSuffix(" 200") {
            answer = try await ready()
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(answer.hasSuffix(" 200"), "\(answer)")
        let note = dir + "/note.json"
        try #"[{"type": "INSERT", "object_type": "Note", "identity": 1, "values": {"text": "x"}}]"#
            .write(toFile: note, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["realm", "apply", "/shop", "--store", dir + "/store", "--file", note])
        #expect(r.status == 0, "\(r.stderr)")
        for _ in 0..<250 where !answer.hasSuffix(" 503") {
            answer = try await ready()
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(answer.hasSuffix(" 503") && answer.contains("shop-hook") && answer.contains("/shop"), "\(answer)")
    }
}
