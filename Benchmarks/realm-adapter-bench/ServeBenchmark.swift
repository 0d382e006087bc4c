import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer
import ServiceLifecycle

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `realm-adapter serve` against the store's own reads and writes, and its subscriptions' latency.
struct ServeBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "GraphQL queries and mutations against the store's own reads and writes; subscription latency.",
        discussion: """
            Serves a store in this process (RealmHTTPServer, tokens on) and times, over HTTP from \
            this process (URLSession, one request at a time):
              query     { items(take: 1) { id } }: what any request costs
              query     { items(take: 1000) { id name qty } } against RealmStore.objects of the \
            same 1,000 objects (target ≥ 0.3)
              mutation  createItem, one object per request and Realm transaction, against \
            RealmStore.write of one object per transaction
            Then --subscribers WebSocket clients (--client: SwiftNIO channel handlers in this \
            process, on two event loops of their own, or Benchmarks/serve/latency.py, Python's \
            websockets in one process) subscribe to the newest tick while the benchmark commits \
            --commits ticks, --interval-ms apart: commit-to-message latency p50 and p99 (target \
            p99 < 20 ms at 1,000 subscribers). Subscriptions that ask the same share one run of \
            their query per commit. The floor follows: a message of the same size written to as \
            many bare loopback sockets by two threads and read by one, and the p99 ÷ floor.
            """
    )

    @Option(help: "Requests of each kind to time.") var requests = 300
    @Option(help: "WebSocket subscribers (0: skip).") var subscribers = 1_000
    @Option(help: "Ticks committed while they listen.") var commits = 100
    @Option(help: "Milliseconds between ticks.") var intervalMs = 100
    @Option(
        help: ArgumentHelp(
            "The subscribers: swift (SwiftNIO channel handlers, in this process), or a Python script "
                + "(Benchmarks/serve/latency.py: about 100 µs a message, at 1,000 subscribers mostly the client)."))
    var client = "swift"
    @Option(help: "Port to serve on.") var port = 19_480
    @Option(help: "Scratch directory (removed afterwards).") var scratch =
        NSTemporaryDirectory() + "realm-adapter-bench-serve"

    func run() async throws {
        try? FileManager.default.removeItem(atPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let store = try RealmStore(directory: scratch + "/store")
        let item = ObjectSchema(
            name: "Item", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.int)), Property(name: "name", type: .scalar(.string)),
                Property(name: "qty", type: .scalar(.int)),
            ])
        let tick = ObjectSchema(
            name: "Tick", primaryKey: "id",
            properties: [Property(name: "id", type: .scalar(.int)), Property(name: "at", type: .scalar(.double))])
        try await store.apply(
            [.addType(item), .addType(tick)]
                + (0..<1_000).map { i in
                    .insert(
                        objectType: "Item", identity: .int(Int64(i)),
                        values: ["id": .int(Int64(i)), "name": .string("item-\(i)"), "qty": .int(Int64(i % 7))])
                }, to: "/bench", origin: "bench")
        var config = ServerConfiguration()
        config.port = port
        let key = Secret(String(repeating: "k", count: 40))
        let users = try UserDirectory(storeDirectory: scratch + "/store")
        let admin = try users.add(name: "bench", password: "bench-password", admin: true)
        let tokens = await Tokens(key: key, configuration: config)
        let token = try await tokens.refreshToken(for: admin).token
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let server = RealmHTTPServer(store: store, users: users, tokens: tokens, configuration: config)
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: try server.service(logger: logger))], logger: logger))
        let serving = Task { try await group.run() }
        defer { serving.cancel() }
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        let session = URLSession(configuration: sessionConfiguration)
        func post(_ query: String) async throws -> Data {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/graphql/bench")!)
            request.httpMethod = "POST"
            request.setValue(token, forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: ["query": query])
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw ValidationError("the server answered \(String(decoding: data, as: UTF8.self))")
            }
            return data
        }
        for _ in 0..<100 {
            if (try? await post("{ items(take: 1) { id } }")) != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        print("realm-adapter serve benchmark: \(requests) requests of each kind, one at a time")
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        // Alternating halves, so that drift on a shared machine falls on both alike.
        var (raw, graphQL) = (Duration.zero, Duration.zero)
        for _ in 0..<2 {
            let r0 = ContinuousClock.now
            for _ in 0..<(requests / 2) { _ = try store.objects(of: "Item", in: "/bench", ObjectQuery(limit: 1_000)) }
            raw += ContinuousClock.now - r0
            let g0 = ContinuousClock.now
            for _ in 0..<(requests / 2) { _ = try await post("{ items(take: 1000) { id name qty } }") }
            graphQL += ContinuousClock.now - g0
        }
        let n = Double(requests / 2 * 2)
        // What a request costs whatever it reads (HTTP both ways, the token, the schema check).
        let t0 = ContinuousClock.now
        for _ in 0..<(requests / 2 * 2) { _ = try await post("{ items(take: 1) { id } }") }
        let fixed = ContinuousClock.now - t0
        print(String(format: "  query of 1 object        %7.0f/s   (what any request costs)", n / seconds(fixed)))
        print(
            String(
                format: "  query of 1,000 objects   %7.0f/s   store read %7.0f/s   ratio %.2f (target ≥ 0.3)",
                n / seconds(graphQL), n / seconds(raw), seconds(raw) / seconds(graphQL)))
        var (writes, mutations) = (Duration.zero, Duration.zero)
        var next = 10_000
        for _ in 0..<2 {
            let w0 = ContinuousClock.now
            for _ in 0..<(requests / 2) {
                next += 1
                try store.write(to: "/bench", origin: "bench") { tx in
                    _ = try tx.create("Item", ["id": .int(Int64(next)), "name": "w", "qty": 0])
                }
            }
            writes += ContinuousClock.now - w0
            let m0 = ContinuousClock.now
            for _ in 0..<(requests / 2) {
                next += 1
                _ = try await post(#"mutation { createItem(input: {id: \#(next), name: "m", qty: 0}) { id } }"#)
            }
            mutations += ContinuousClock.now - m0
        }
        print(
            String(
                format: "  mutation (one object)    %7.0f/s   store write %6.0f/s   ratio %.2f",
                n / seconds(mutations), n / seconds(writes), seconds(writes) / seconds(mutations)))
        if subscribers > 0 { try await latency(store, token: token) }
        await group.triggerGracefulShutdown()
    }

    /// Ticks committed 10 ms apart while the subscribers listen; their latencies.
    func latency(_ store: RealmStore, token: String) async throws {
        if client == "swift" {
            let subscribers = SubscriberLatency(
                port: port, path: "/graphql/bench", token: token, subscribers: self.subscribers, commits: commits)
            let latencies = try await subscribers.run { try await ticks(store) }
            report(
                [
                    "messages": Double(latencies.count), "p50": latencies.percentile(0.5),
                    "p99": latencies.percentile(0.99),
                ])
            return
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "python3", client, "ws://127.0.0.1:\(port)/graphql/bench", token, String(subscribers), String(commits),
        ]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let reader = out.fileHandleForReading
        var text = ""
        while !text.contains("ready") {
            let chunk = reader.availableData
            guard !chunk.isEmpty else { throw ValidationError("the latency client (\(client)) stopped: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        try await ticks(store)
        p.waitUntilExit()
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let r = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double]
        else { throw ValidationError("the latency client said: \(text)") }
        report(r)
    }

    /// The ticks, `intervalMs` apart, each stamped with its commit time (µs since 1970).
    func ticks(_ store: RealmStore) async throws {
        for i in 1...commits {
            try store.write(to: "/bench", origin: "bench") { tx in
                _ = try tx.create(
                    "Tick", ["id": .int(Int64(i)), "at": .double((Date().timeIntervalSince1970 * 1e6).rounded())])
            }
            try await Task.sleep(for: .milliseconds(intervalMs))
        }
    }

    func report(_ r: [String: Double]) {
        print(
            String(
                format: "  commit → WebSocket, %d subscribers (\(client == "swift" ? "SwiftNIO" : "Python") client), "
                    + "%d commits %d ms apart: p50 %.1f ms, p99 %.1f ms (%.0f messages; target p99 < 20 ms)",
                subscribers, commits, intervalMs, r["p50"] ?? 0, r["p99"] ?? 0, r["messages"] ?? 0))
        guard
            let floor = try? LoopbackFloor.measure(
                connections: subscribers, bytes: 96, rounds: commits, intervalMs: intervalMs)
        else { return print("  (the loopback floor could not be measured)") }
        let f = ["p50": floor.percentile(0.5), "p99": floor.percentile(0.99)]
        print(
            String(
                format: "  floor: 96 bytes to each of %d loopback sockets (2 writer threads, 1 reader), "
                    + "no WebSocket or store: p50 %.1f ms, p99 %.1f ms; the subscribers' p99 ÷ floor %.1f",
                subscribers, f["p50"] ?? 0, f["p99"] ?? 0, (r["p99"] ?? 0) / (f["p99"] ?? 1)))
    }
}
