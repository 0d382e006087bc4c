import ArgumentParser
import Foundation
import Logging
import RealmAdapter

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Change events against the Adapter's raw replay, and webhook deliveries against bare POSTs.
struct EventsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Change events per second against the Adapter's raw replay; webhook deliveries against bare POSTs.",
        discussion: """
            One Realm gets --transactions transactions of 10 instructions (5 INSERTs of new objects, \
            5 SETs of older ones), written once into a store an event handler follows (so each \
            records its before-images) and once into a store nobody records for (the cost of \
            recording on the write path). Then, on the recorded store, in one run:
              raw replay   Adapter.current/advance over every transaction (the physical limit)
              events       EventHandler.drain with a no-op handler: change set, snapshot, advance
            The webhook part POSTs the first --posts transactions' change sets to a local endpoint \
            (Python's http.server, Tests/Support/webhook-receiver) through Webhook, against bare \
            URLSession POSTs of the same bodies to the same endpoint.
            """
    )

    @Option(help: "Transactions to write and replay.") var transactions = 20_000
    @Option(help: "Webhook deliveries to time (0: skip the webhook part).") var posts = 2_000
    @Option(help: "The webhook receiver script.") var receiver = "Tests/Support/webhook-receiver/receiver.py"
    @Option(help: "Scratch directory (removed afterwards).") var scratch =
        NSTemporaryDirectory() + "realm-adapter-bench-events"

    func run() async throws {
        try? FileManager.default.removeItem(atPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let recorded = try RealmStore(directory: scratch + "/recorded")
        let plain = try RealmStore(directory: scratch + "/plain")
        let handler = try EventHandler(store: recorded, name: "bench", pathRegex: "^/bench$") { _ in }
        let raw = try Adapter(store: recorded, name: "raw", pathRegex: "^/bench$")
        let schema = ObjectSchema(
            name: "Item", primaryKey: "id",
            properties: [Property(name: "id", type: .scalar(.int)), Property(name: "n", type: .scalar(.int))])
        for s in [recorded, plain] { try await s.apply([.addType(schema)], to: "/bench", origin: "app") }
        func tx(_ i: Int) -> [Instruction] {
            (0..<5).map { k in .insert(objectType: "Item", identity: .int(Int64(i * 5 + k)), values: ["n": .int(0)]) }
                + (0..<5).map { k in
                    .set(
                        objectType: "Item", identity: .int(Int64(max(0, i - 1) * 5 + k)), values: ["n": .int(Int64(i))])
                }
        }
        func timed(_ body: () throws -> Void) rethrows -> Double {
            let start = ContinuousClock.now
            try body()
            let d = ContinuousClock.now - start
            return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }
        let n = transactions
        print("realm-adapter events benchmark: \(n) transactions of 10 instructions in one Realm")
        let applyPlain = try timed { for i in 0..<n { try plain.apply(tx(i), to: "/bench", origin: "app") } }
        let applyRecorded = try timed { for i in 0..<n { try recorded.apply(tx(i), to: "/bench", origin: "app") } }
        let replay = try timed {
            while let t = try raw.current("/bench") { try raw.advance("/bench", through: t.version, durable: false) }
        }
        // Webhooks first: the drain below lets compaction remove what they read.
        if posts > 0 { try await webhooks(recorded) }
        let start = ContinuousClock.now
        try await handler.drain("/bench")
        let d = ContinuousClock.now - start
        let events = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        let total = Double(n + 1)
        func rate(_ count: Double, _ seconds: Double) -> String { String(format: "%.0f/s", count / seconds) }
        print("apply, nobody recording     \(rate(Double(n), applyPlain))")
        print(
            "apply, recorded for events  \(rate(Double(n), applyRecorded))  (÷ not recorded: "
                + String(format: "%.2f", applyPlain / applyRecorded) + ")")
        print("raw replay                  \(rate(total, replay))")
        print(
            "events, no-op handler       \(rate(total, events))  (÷ raw replay: "
                + String(format: "%.2f", replay / events) + "; target ≥ 0.3)")
    }

    /// Deliveries through Webhook against bare POSTs of the same bodies.
    func webhooks(_ store: RealmStore) async throws {
        let dir = scratch + "/receiver"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", receiver, "/dev/null", "s3cret"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        defer { p.terminate() }
        guard let line = String(data: out.fileHandleForReading.availableData, encoding: .utf8),
            let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw ValidationError("the receiver \(receiver) did not start (run from the repository's root)") }
        let url = URL(string: "http://127.0.0.1:\(port)/ok")!
        let history = try store.history(of: "/bench", after: 1, limit: posts)
        let sets = try history.map { try store.changeSet(of: $0, in: "/bench") }
        let hook = Webhook(WebhookConfiguration(pathRegex: "^/bench$", url: url))
        let session = URLSession(configuration: .ephemeral)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let bodies = sets.map { Data($0.json.serialized().utf8) }
        var bare = Duration.zero
        var through = Duration.zero
        // Alternating halves, so that drift on a shared machine falls on both alike.
        for half in 0..<2 {
            let range = half == 0 ? 0..<(sets.count / 2) : (sets.count / 2)..<sets.count
            let s1 = ContinuousClock.now
            for i in range {
                request.httpBody = bodies[i]
                _ = try await session.data(for: request)
            }
            bare += ContinuousClock.now - s1
            let s2 = ContinuousClock.now
            for i in range { try await hook.deliver(sets[i]) }
            through += ContinuousClock.now - s2
        }
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        let count = Double(sets.count)
        print(
            String(
                format: "webhook deliveries          %.0f/s  (bare POSTs %.0f/s; ÷ bare: %.2f)",
                count / seconds(through),
                count / seconds(bare), seconds(bare) / seconds(through)))
    }
}
