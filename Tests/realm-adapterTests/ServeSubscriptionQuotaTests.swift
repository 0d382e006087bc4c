import Foundation
import TestSupport
import Testing

/// How many subscriptions one user may hold at once, across connections.
@Suite(.serialized) struct ServeSubscriptionQuotaTests {
    /// A user holds at most 200 subscriptions, whatever the connections: each connection held
    /// up to 100, but a user could open any number of connections, each running its queries
    /// after every commit. Three connections of 100 get 200 answers and 100 errors that say so.
    @Test func aUserHoldsAtMostTwoHundredSubscriptions() async throws {
        let s = try await ServeTests.Server()
        try await s.start()
        let alice = try await s.login("alice")
        let port = s.port
        func connection(_ n: Int) async throws -> [String] {
            let subscribes = (1...100).map {
                #"{"type": "subscribe", "id": "c\#(n)s\#($0)", "payload": "#
                    + #"{"query": "subscription { q\#($0): stops { id } }"}}"#
            }
            let r = try await ChildProcess.run(
                "/usr/bin/env",
                // 15 s: 300 subscriptions' first answers on a machine the rest of the suite keeps
                // busy (8 s once left some without their answer or refusal).
                ["python3", ServeTests.Server.script("probe.py"), "127.0.0.1", "\(port)", "/graphql/shop", "15"]
                    + [ServeTests.Server.hello(alice)] + subscribes)
            return r.stdout.split(separator: "\n").map(String.init)
        }
        async let a = connection(1)
        async let b = connection(2)
        async let c = connection(3)
        let lines = try await a + b + c
        #expect(lines.filter { $0.contains(#""type": "next""#) }.count == 200, "\(lines.suffix(3))")
        let refused = lines.filter { $0.contains(#""type": "error""#) }
        #expect(
            refused.count == 100 && refused.allSatisfy { $0.contains("at most 200 subscriptions") },
            "\(refused.prefix(2))")
    }
}
