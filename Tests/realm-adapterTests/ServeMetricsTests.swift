import Foundation
import TestSupport
import Testing

/// `serve --metrics-port`: requests by route and status (Hummingbird's middleware), logins by
/// provider and result, WebSocket connections, subscriptions and their messages, read with
/// Prometheus's own parser.
@Suite(.serialized) struct ServeMetricsTests {
    @Test func serveCountsItsRequestsLoginsAndSubscriptions() async throws {
        let s = try await ServeTests.Server()
        let metricsPort = s.port + 1
        s.arguments = ["--metrics-port", "\(metricsPort)"]
        try await s.start()
        let alice = try await s.login("alice")
        _ = try await s.curl(
            "POST", "/auth", #"{"provider": "password", "data": "bob", "user_info": {"password": "wrong!!!"}}"#)
        _ = try await s.graphQL("/shop", alice, "{ stops { id } }")
        _ = try await s.curl("POST", "/graphql/nowhere", #"{"query": "{ stops { id } }"}"#, token: alice)

        // One subscriber, held open while the metrics are read, then one change.
        let script = ServeTests.Server.script("subscribe.py")
        let out = s.dir + "/sub.out"
        let subscriber = try ChildProcess(
            "/usr/bin/env",
            ["python3", script, "ws://127.0.0.1:\(s.port)/graphql/shop", alice, "subscription { stops { id } }", "2"],
            stdout: out, stderr: s.dir + "/sub.err")
        func ready() -> Bool {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains(#"{"ready": true}"#)
        }
        for _ in 0..<500 where !ready() && subscriber.isRunning { try await Task.sleep(for: .microseconds(20_000)) }

        func scrape() async throws -> [String] { try await s.metrics(at: metricsPort) }
        func value(_ lines: [String], _ sample: String) -> Double? { ServeTests.Server.sample(lines, sample) }
        var lines = try await scrape()
        #expect(value(lines, #"realm_adapter_logins_total{provider="password",result="ok"}"#) == 1, "\(lines)")
        #expect(value(lines, #"realm_adapter_logins_total{provider="password",result="refused"}"#) == 1)
        #expect(value(lines, "realm_adapter_graphql_connections{}") == 1, "\(lines)")
        #expect(value(lines, "realm_adapter_graphql_subscriptions{}") == 1)
        let notFound = #"hb_requests_total{http_request_method="POST",http_response_status_code="404","#
        #expect(
            value(lines, notFound + #"http_route="/graphql/**"}"#) == 1, "\(lines.filter { $0.hasPrefix("hb_") })")
        #expect(
            value(
                lines,
                #"hb_requests_total{http_request_method="POST",http_response_status_code="200",http_route="/auth"}"#)
                == 1)

        _ = try await s.graphQL("/shop", alice, #"mutation { createStop(input: {id: 5, name: "Ford"}) { id } }"#)
        #expect(
            await subscriber.wait() == 0, "\((try? String(contentsOfFile: s.dir + "/sub.err", encoding: .utf8)) ?? "")")
        for _ in 0..<100 {
            lines = try await scrape()
            if value(lines, "realm_adapter_graphql_connections{}") == 0 { break }
            try await Task.sleep(for: .microseconds(20_000))
        }
        #expect(value(lines, "realm_adapter_graphql_subscription_messages_total{}") == 2, "\(lines)")
        #expect(value(lines, "realm_adapter_graphql_connections{}") == 0)
        #expect(value(lines, "realm_adapter_graphql_subscriptions{}") == 0)
    }
}
