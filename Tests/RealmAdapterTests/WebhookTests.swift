import Foundation
import Logging
import TestSupport
import Testing

@testable import RealmAdapter

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Webhooks against a real HTTP endpoint (Python's http.server, Tests/Support/webhook-receiver),
/// with failures injected by path.
@Suite(.serialized) struct WebhookTests {
    static let fast: DatabaseConfiguration.Retry = {
        var r = DatabaseConfiguration.Retry()
        r.delayMs = 20
        r.maxDelayMs = 50
        r.attempts = 0
        return r
    }()

    func webhook(_ url: URL, types: Set<String>? = nil, timeout: Int = 10) -> WebhookConfiguration {
        var w = WebhookConfiguration(pathRegex: "^/", url: url, types: types, timeoutSeconds: timeout)
        w.secret = Secret("s3cret")
        w.headers = [("Authorization", "Bearer t0ken")]
        return w
    }

    func note(_ i: Int64) -> Instruction {
        .insert(objectType: "Note", identity: .int(i), values: ["text": .string("n\(i)")])
    }

    /// Runs the services until `done` holds (at most 30 s).
    func run(_ services: [EventHandler], until done: () throws -> Bool) async throws {
        let tasks = services.map { s in Task { try await s.run() } }
        defer { for t in tasks { t.cancel() } }
        let deadline = ContinuousClock.now + .seconds(30)
        while try !done() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func eachTransactionIsPostedSignedWithItsIdempotencyKeyAndOnlyForItsTypes() async throws {
        let r = try await WebhookReceiver()
        let t = try TemporaryStore()
        let hook = try Webhook(webhook(r.url("/ok"), types: ["Note"])).handler(
            store: t.store, retry: Self.fast, logger: .init(label: "t"))
        try await t.store.apply([.addType(taskSchema[0]), .addType(taskSchema[2]), note(1)], to: "/a", origin: "app")
        try await t.store.apply(
            [.insert(objectType: "Person", identity: "p", values: ["id": "p"])], to: "/a", origin: "app")
        try await t.store.apply(
            [.set(objectType: "Note", identity: .int(1), values: ["text": "edited"])], to: "/a", origin: "app")
        try await run([hook]) { try r.parsed.count >= 2 && hook.lag().pending == 0 }
        let requests = r.parsed
        #expect(requests.map { $0["key"] } == [.string("/a@1"), .string("/a@3")])  // /a@2 changed only a Person
        #expect(requests.allSatisfy { $0["signed"] == .bool(true) && $0["auth"] == .string("Bearer t0ken") })
        let body = try #require(requests.last?["body"])
        #expect(body["id"] == .string("/a@3") && body["origin"] == .string("app"))
        let modified = body["changes"]?["Note"]?["modified"]
        #expect(
            modified
                == .array([
                    .object([
                        .init("identity", .int(1)),
                        .init(
                            "changed",
                            .object([
                                .init(
                                    "text",
                                    .object([.init("before", .string("n1")), .init("after", .string("edited"))]))
                            ])),
                        .init("object", .object([.init("_identity", .int(1)), .init("text", .string("edited"))])),
                    ])
                ]))
    }

    /// A path outside ASCII is percent-encoded in the header (header values are ASCII); the body keeps it.
    @Test func idempotencyKeysAreASCII() async throws {
        let r = try await WebhookReceiver()
        let t = try TemporaryStore()
        let hook = try Webhook(webhook(r.url("/ok"))).handler(
            store: t.store, retry: Self.fast, logger: .init(label: "t"))
        try await t.store.apply([.addType(taskSchema[2]), note(1)], to: "/shöp 日本", origin: "app")
        try await run([hook]) { !r.parsed.isEmpty }
        #expect(r.parsed.first?["key"] == .string("/sh%C3%B6p%20%E6%97%A5%E6%9C%AC@1"))
        #expect(r.parsed.first?["body"]?["id"] == .string("/shöp 日本@1"))
    }

    /// A webhook naming a type the configuration's schema lacks is warned about at start: a
    /// misspelt type would pass every transaction by without a word.
    @Test func typesTheSchemaLacksAreWarnedAbout() async throws {
        let t = try TemporaryStore()
        var events = EventsConfiguration()
        events.webhooks = [webhook(URL(string: "http://127.0.0.1:1/x")!, types: ["Note", "Cupon"])]
        let captured = CapturedLog()
        let logger = Logger(label: "t") { _ in captured }
        _ = try events.services(store: t.store, schema: try Schema(taskSchema), logger: logger)
        #expect(
            captured.lines.count == 1 && captured.lines[0].contains("Cupon") && !captured.lines[0].contains("Note,"))
    }

    /// An endpoint that fails gets the same transaction again (same idempotency key) until it
    /// takes it; another webhook on the same Realms is not held back meanwhile.
    @Test func failuresAreRetriedWithTheSameKeyAndHoldBackOnlyTheirWebhook() async throws {
        let r = try await WebhookReceiver()
        let t = try TemporaryStore()
        let logger = Logger(label: "t")
        let flaky = try Webhook(webhook(r.url("/fail/2"))).handler(store: t.store, retry: Self.fast, logger: logger)
        let broken = try Webhook(webhook(r.url("/always-500"))).handler(
            store: t.store, retry: Self.fast, logger: logger)
        let good = try Webhook(webhook(r.url("/ok"))).handler(store: t.store, retry: Self.fast, logger: logger)
        try await t.store.apply([.addType(taskSchema[2]), note(1)], to: "/a", origin: "app")
        try await t.store.apply([note(2)], to: "/a", origin: "app")
        try await run([flaky, broken, good]) {
            let ok = r.parsed.filter { $0["path"] == .string("/ok") }.count
            let flakyDone = r.parsed.filter { $0["path"] == .string("/fail/2") }.count == 6
            return try ok == 2 && flakyDone && good.lag().pending == 0 && flaky.lag().pending == 0
        }
        let flakyKeys = r.parsed.filter { $0["path"] == .string("/fail/2") }.map { $0["key"] }
        #expect(
            flakyKeys == [
                .string("/a@1"), .string("/a@1"), .string("/a@1"), .string("/a@2"), .string("/a@2"), .string("/a@2"),
            ])
        #expect(try broken.lag().pending == 2)  // nothing lost: still to deliver
        #expect(try broken.lag().deadLetters.isEmpty)
    }

    /// A redirect loop, a slow endpoint and an unreachable one each fail with a reason that says
    /// so, and after the configured attempts the transaction is a dead letter.
    @Test func redirectsTimeoutsAndRefusedConnectionsFailClearly() async throws {
        let r = try await WebhookReceiver()
        let t = try TemporaryStore()
        var retry = Self.fast
        retry.attempts = 2
        let unreachable = URL(string: "http://127.0.0.1:1/hook")!
        let hooks = try [(r.url("/loop"), 10), (r.url("/slow"), 1), (unreachable, 10)].map { url, timeout in
            try Webhook(webhook(url, timeout: timeout)).handler(store: t.store, retry: retry, logger: .init(label: "t"))
        }
        try await t.store.apply([.addType(taskSchema[2]), note(1)], to: "/a", origin: "app")
        // Set aside, then moved past (two steps: a dead letter is never lost, at worst kept twice).
        try await run(hooks) { try hooks.allSatisfy { try !$0.lag().deadLetters.isEmpty && $0.lag().pending == 0 } }
        let errors = try hooks.map { try $0.lag().deadLetters.first?.error ?? "" }
        #expect(errors[0].contains("a redirect to /loop, which webhooks do not follow"))
        #expect(errors[1].contains("did not answer within 1 s"))
        #expect(errors[2].contains("the connection was refused"))
        #expect(try hooks.allSatisfy { try $0.lag().pending == 0 && $0.lag().deadLetters.first?.attempts == 2 })
        // The loop was asked once per attempt: never followed.
        #expect(r.parsed.filter { $0["path"] == .string("/loop") }.count == 2)
    }

    /// An endpoint that answers 200 and then a body without end: a probe saw the process keep
    /// all of it (6 GB in 12 s, past `timeoutSeconds`) while the delivery never ended. The answer's
    /// status delivers; its body is never kept.
    @Test func anAnswerWithoutEndDeliversAtItsStatusAndIsNotKept() async throws {
        let r = try await WebhookReceiver()
        let t = try TemporaryStore()
        let hook = try Webhook(webhook(r.url("/endless"), timeout: 2)).handler(
            store: t.store, retry: Self.fast, logger: .init(label: "t"))
        try await t.store.apply([.addType(taskSchema[2]), note(1)], to: "/a", origin: "app")
        try await t.store.apply([note(2)], to: "/a", origin: "app")
        try await run([hook]) { try hook.lag().pending == 0 }
        #expect(try hook.lag().deadLetters.isEmpty)
        #expect(r.parsed.filter { $0["path"] == .string("/endless") }.count == 2)
    }

    /// Deliveries cancelled at every moment of their transfer, as a stopping daemon cancels the one
    /// in flight: each ends (answered or cancelled) and the process lives. Cancelling the URLSession
    /// task itself crashed it at random ("a task that is not in the registry", a CI run's crash)
    /// when the cancel met the transfer's own end.
    @Test func deliveriesCancelledAtAnyMomentEndAndNeverCrash() async throws {
        let r = try await WebhookReceiver()
        let transfers = Transfers()
        let session = URLSession(configuration: .ephemeral, delegate: transfers, delegateQueue: nil)
        var request = URLRequest(url: r.url("/ok"))
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        var (answered, cancelled) = (0, 0)
        for i in 0..<1_500 {
            let delivery = Task { try await Webhook.send(request, session, transfers) }
            try await Task.sleep(for: .microseconds(i % 40 * 100))
            delivery.cancel()
            do {
                _ = try await delivery.value
                answered += 1
            } catch {
                cancelled += 1
            }
        }
        #expect(answered + cancelled == 1_500)
    }

    @Test(arguments: [
        (#"{"pathRegex": "^/", "url": "ftp://x/y"}"#, "events.webhooks[0].url", "http:// or https://"),
        (#"{"pathRegex": "^/", "url": "https://u:p@x/y"}"#, "events.webhooks[0].url", "must not hold credentials"),
        (#"{"pathRegex": "(", "url": "https://x/y"}"#, "events.webhooks[0].pathRegex", "regular expression"),
        (#"{"pathRegex": "^/", "url": "https://x/y", "types": [3]}"#, "events.webhooks[0].types", "element 0"),
        (#"{"pathRegex": "^/", "url": "https://x/y", "retries": 3}"#, "events.webhooks[0].retries", "unknown key"),
        (#"{"pathRegex": "^/", "url": "http://x:99999/y"}"#, "events.webhooks[0].url", "99999 is not between"),
        (#"{"pathRegex": "^/", "url": "https://x/y", "headers": {"Bad Header": "v"}}"#, "headers", "not a header name"),
        (#"{"pathRegex": "^/", "url": "https://x/y", "headers": {"X-A": "a\r\nX-B: 1"}}"#, "headers", "line break"),
        (
            #"{"pathRegex": "^/", "url": "https://x/y", "headers": {"Idempotency-Key": "k"}}"#, "headers",
            "set by realm-adapter"
        ),
        (#"{"pathRegex": "^/", "url": "https://x/y", "headers": {"Host": "evil"}}"#, "headers", "set by realm-adapter"),
        (#"{"pathRegex": "^/", "url": "https://x/y", "secretEnv": ""}"#, "secretEnv", "must name"),
        // A probe's: an empty pattern said "not a valid regular expression"; an empty types list sent
        // nothing without a word; a name with an escape sequence was printed raw by status.
        (#"{"pathRegex": "", "url": "https://x/y"}"#, "events.webhooks[0].pathRegex", "is empty"),
        (#"{"pathRegex": "^/", "url": "https://x/y", "types": []}"#, "events.webhooks[0].types", "send nothing"),
        (#"{"pathRegex": "^/", "url": "https://x/y", "name": "a\u001b[2Jb"}"#, "events.webhooks[0].name", "control"),
    ])
    func badWebhookConfigurationsNameTheirPlace(webhook: String, place: String, says: String) throws {
        let json = try JSONValue(
            parsing: """
                {"schema": [{"name": "Note", "properties": {"text": "string"}}], "realm": {"path": "/n"},
                 "events": {"webhooks": [\(webhook)]}}
                """)
        let error = try #require(throws: RealmAdapterError.self) { try Configuration(json: json, environment: [:]) }
        #expect(error.description.contains(place) && error.description.contains(says), "\(error)")
    }

    /// `status` and `validate` read the configuration but deliver nothing: an unset `secretEnv`
    /// stops only what delivers (a probe found `status` refusing to run for want of the secret).
    @Test func anUnsetSecretStopsOnlyDelivery() throws {
        let json = try JSONValue(
            parsing: #"{"schema": [{"name": "Note", "properties": {"text": "string"}}], "realm": {"path": "/n"}, "#
                + #""events": {"webhooks": [{"pathRegex": "^/", "url": "https://x/y", "secretEnv": "NO_SUCH_X"}]}}"#)
        let c = try Configuration(json: json, environment: [:])
        let t = try TemporaryStore()
        let error = try #require(throws: RealmAdapterError.self) {
            _ = try c.events.services(store: t.store, schema: c.schema, logger: Logger(label: "t"))
        }
        #expect(error.description.contains("events.webhooks[0].secretEnv") && error.description.contains("not set"))
    }

    /// A redirect's `Location` is shown without its query and with control characters escaped.
    @Test func aRedirectsLocationIsShownSafely() {
        let shown = Webhook.shown("https://evil.example/a\u{1b}[2J?token=secret")
        #expect(!shown.contains("\u{1b}") && !shown.contains("secret"), "\(shown)")
        #expect(Webhook.shown("http://x/y?token=t") == "http://x/y")
    }
}

extension WebhookReceiver {
    var parsed: [JSONValue] { requests.compactMap { try? JSONValue(parsing: $0) } }
}

/// Log lines (level, message, metadata) a test reads back.
final class CapturedLog: LogHandler, @unchecked Sendable {
    // @unchecked: the lock guards `storage`.
    private let lock = NSLock()
    private var storage: [String] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var lines: [String] { lock.withLock { storage } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = "\(event.level) \(event.message) \((event.metadata ?? [:]).sorted { $0.key < $1.key })"
        lock.withLock { storage.append(line) }
    }
}
