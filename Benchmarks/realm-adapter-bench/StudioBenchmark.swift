import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer
import ServiceLifecycle

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Studio's pages over a store of many Realms: how long each takes to answer.
struct StudioBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studio",
        abstract: "How long Studio's pages take at --realms Realms (per-user Realms: the list is paged and searched).",
        discussion: """
            Writes --realms Realms (`/u<i>/todos`, one Todo each, 10,000 Realms per store transaction), \
            serves the store in this process (RealmHTTPServer, tokens on) and times, over HTTP from \
            this process (URLSession, one request at a time, --requests of each, after one to warm up), \
            as an admin's session: the list of Realms (its first page, a page in the middle, the \
            last), searched by a path that selects one Realm and by one that selects a tenth of them, \
            a user's list (their one Realm among all), one Realm's page and its objects. The floor, \
            in the same run: Studio's style sheet (the HTTP round trip, the session and nothing else). \
            Target: every page under 1 s (issue 46: 100,000 Realms).
            """
    )

    @Option(help: "Realms in the store.") var realms = 100_000
    @Option(help: "Requests of each page to time.") var requests = 10
    @Option(help: "Port to serve on.") var port = 19_490
    @Option(help: "Scratch directory (removed afterwards).") var scratch =
        NSTemporaryDirectory() + "realm-adapter-bench-studio"

    func run() async throws {
        try? FileManager.default.removeItem(atPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let store = try RealmStore(directory: scratch + "/store")
        let todo = ObjectSchema(
            name: "Todo", primaryKey: "id",
            properties: [Property(name: "id", type: .scalar(.int)), Property(name: "title", type: .scalar(.string))])
        let written = ContinuousClock.now
        for start in stride(from: 0, to: realms, by: 10_000) {
            let paths = (start..<min(start + 10_000, realms)).map { "/u\($0)/todos" }
            _ = try store.write(toEach: paths, origin: "bench") { path, tx in
                try tx.addType(todo)
                _ = try tx.create("Todo", ["id": 1, "title": .string(path)])
            }
        }
        print(
            "realm-adapter Studio benchmark: \(realms) Realms written in \(Self.format(ContinuousClock.now - written))")
        var config = ServerConfiguration()
        config.port = port
        let users = try UserDirectory(storeDirectory: scratch + "/store")
        let admin = try users.add(name: "bench", password: "bench-password", admin: true)
        let user = try users.add(name: "user", password: "user-password")
        _ = try store.write(to: "/\(user.id)/todos", origin: "bench") { tx in try tx.addType(todo) }
        let tokens = await Tokens(key: Secret(String(repeating: "k", count: 40)), configuration: config)
        let (adminSession, userSession) = (
            try await tokens.refreshToken(for: admin).token, try await tokens.refreshToken(for: user).token
        )
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let server = RealmHTTPServer(store: store, users: users, tokens: tokens, configuration: config)
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: try server.service(logger: logger))], logger: logger))
        let serving = Task { try await group.run() }
        defer { serving.cancel() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        let session = URLSession(configuration: configuration)
        func get(_ page: String, as cookie: String = adminSession) async throws -> Duration {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/studio/\(page)")!)
            request.setValue("studio=\(cookie)", forHTTPHeaderField: "Cookie")
            let t0 = ContinuousClock.now
            let (data, response) = try await session.data(for: request)
            let took = ContinuousClock.now - t0
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw ValidationError(
                    "\(page): the server answered \(String(decoding: data.prefix(300), as: UTF8.self))")
            }
            return took
        }
        for _ in 0..<100 {
            if (try? await get("assets/studio.css")) != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let pages = (realms + 49) / 50  // Studio shows 50 Realms a page
        let cases: [(String, String, String)] = [
            ("floor: the style sheet", "assets/studio.css", adminSession),
            ("Realms, page 1", "realms", adminSession),
            ("Realms, a middle page", "realms?page=\(pages / 2)", adminSession),
            ("Realms, the last page", "realms?page=\(pages)", adminSession),
            ("Realms, search: one", "realms?q=%2Fu\(realms / 2)%2F", adminSession),
            ("Realms, search: a tenth", "realms?q=%2Fu1", adminSession),
            ("a user's Realms", "realms", userSession),
            ("a Realm", "realm?path=%2Fu7%2Ftodos", adminSession),
            ("its objects", "objects?path=%2Fu7%2Ftodos&type=Todo", adminSession),
        ]
        print(Self.row(["page", "median ms", "max ms", "÷ floor", "target"]))
        var floor = 0.0
        var met = true
        for (name, page, cookie) in cases {
            _ = try await get(page, as: cookie)
            var times: [Double] = []
            for _ in 0..<requests { times.append(Self.milliseconds(try await get(page, as: cookie))) }
            times.sort()
            let median = times[times.count / 2]
            if floor == 0 { floor = median }
            let ok = times.last! < 1_000
            met = met && ok
            print(
                Self.row([
                    name, String(format: "%.1f", median), String(format: "%.1f", times.last!),
                    String(format: "%.0f", median / floor),
                    name.hasPrefix("floor") ? "" : (ok ? "< 1 s: met" : "< 1 s: NOT met"),
                ]))
        }
        print(met ? "Every page answered in under 1 s." : "Some page took 1 s or more.")
        await group.triggerGracefulShutdown()
    }

    static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1_000 + Double(d.components.attoseconds) / 1e15
    }

    static func format(_ d: Duration) -> String { String(format: "%.1f s", milliseconds(d) / 1_000) }

    static func row(_ cells: [String]) -> String {
        zip(cells, [26, 10, 9, 8, 14]).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
            separator: " ")
    }
}
