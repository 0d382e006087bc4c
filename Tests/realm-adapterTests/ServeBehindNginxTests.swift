import Foundation
import TestSupport
import Testing

/// Two `serve` replicas on one Postgres store behind a real nginx, configured by
/// `examples/nginx/realm-adapter.conf` (its replicas' ports replaced by the test's).
@Suite struct ServeBehindNginxTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples/nginx/realm-adapter.conf").standardizedFileURL.path

    /// nginx on `port` in front of `replicas`, from the example configuration.
    static func nginx(port: Int, replicas: [Int], in dir: String) throws -> ChildProcess {
        var conf = try String(contentsOfFile: example, encoding: .utf8)
        conf = conf.replacingOccurrences(
            of: "    server 127.0.0.1:9080;\n    server 127.0.0.1:9081;\n",
            with: replicas.map { "    server 127.0.0.1:\($0);\n" }.joined())
        conf = conf.replacingOccurrences(of: "listen 8080;", with: "listen 127.0.0.1:\(port);")
        try #require(conf.contains("127.0.0.1:\(replicas[0])") && conf.contains("listen 127.0.0.1:\(port)"))
        try conf.write(toFile: dir + "/realm-adapter.conf", atomically: true, encoding: .utf8)
        try """
        daemon off;
        pid \(dir)/nginx.pid;
        error_log \(dir)/nginx-error.log;
        events {}
        http {
            access_log off;
            client_body_temp_path \(dir); proxy_temp_path \(dir);
            include \(dir)/realm-adapter.conf;
        }
        """.write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
        return try ChildProcess(
            "/usr/sbin/nginx", ["-c", dir + "/nginx.conf", "-p", dir, "-e", dir + "/nginx-error.log"],
            stdout: dir + "/nginx.out", stderr: dir + "/nginx.out")
    }

    @Test(.timeLimit(.minutes(2)))
    func subscribersThroughTheBalancerSeeEveryReplicasChangesAndOutliveOne() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") else {
            if ServeReplicaTests.environment["CI"] == "true" { Issue.record("no nginx: run scripts/install-deps.sh") }
            return
        }
        guard let (url, drop) = try await ServeReplicaTests.freshStore() else {
            if ServeReplicaTests.environment["CI"] == "true" { Issue.record("no Postgres test server") }
            return
        }
        let a = try await ServeTests.Server(store: url)
        try await a.start()
        let b = try await ServeTests.Server(store: url, seeded: false)
        try await b.start()
        let port = freePort()
        let nginx = try Self.nginx(port: port, replicas: [a.port, b.port], in: a.dir)
        defer {
            nginx.signal(SIGTERM)
            nginx.reap()
        }
        // The balancer answers (any replica); its tokens are good at both.
        func front(_ method: String, _ path: String, _ body: String) async throws -> (status: Int, body: String) {
            try await ServeTests.Server.curl("http://127.0.0.1:\(port)", dir: a.dir, method, path, body)
        }
        var status = 0
        for _ in 0..<250 where status != 400 {
            status = try await front("POST", "/auth", "{}").status
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(
            status == 400,
            "nginx did not answer: \((try? String(contentsOfFile: a.dir + "/nginx-error.log", encoding: .utf8)) ?? "")")
        let refresh = try ServeTests.Server.field(
            try await front(
                "POST", "/auth",
                #"{"provider": "password", "data": "alice", "user_info": {"password": "alice-password"}}"#
            ).body,
            "refresh_token", "token")
        let access = try ServeTests.Server.field(
            try await front("POST", "/auth", #"{"provider": "realm", "data": "\#(refresh)", "path": "/shop"}"#).body,
            "access_token", "token")

        // Two subscribers through nginx (round robin: one on each replica) each see a mutation
        // sent straight to either replica.
        func subscriber(_ n: Int) throws -> () -> String {
            let out = a.dir + "/subscriber-\(n).out"
            let subscribe = #"{"type": "subscribe", "id": "1", "payload": {"query": "subscription { stops { id } }"}}"#
            _ = try ChildProcess(
                "/usr/bin/env",
                [
                    "python3", ServeTests.Server.script("probe.py"), "127.0.0.1", "\(port)", "/graphql/shop", "30",
                    ServeTests.Server.hello(access), subscribe,
                ],
                stdout: out, stderr: out + ".err")
            return { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        }
        let subscribers = [try subscriber(1), try subscriber(2)]
        func eventually(_ what: String, _ condition: () -> Bool) async throws {
            for _ in 0..<300 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
            #expect(condition(), "\(what): \(subscribers.map { $0() })")
        }
        try await eventually("both subscribed") { subscribers.allSatisfy { $0().contains("next") } }
        for (server, id) in [(a, 21), (b, 22)] {
            let created = try await server.graphQL(
                "/shop", access, #"mutation { createStop(input: {id: \#(id), name: "S\#(id)"}) { id } }"#)
            #expect(created == #"{"data": {"createStop": {"id": \#(id)}}}"#)
            try await eventually("stop \(id) reached both") {
                subscribers.allSatisfy { $0().contains(#"{"id": \#(id)}"#) }
            }
        }

        // One replica killed: requests through nginx go on, and a client that subscribes
        // again gets the current answer, with everything it had subscribed to.
        a.process?.signal(SIGKILL)
        a.process?.reap()
        for _ in 0..<4 {
            let r = try await front("POST", "/auth", #"{"provider": "realm", "data": "\#(refresh)", "path": "/shop"}"#)
            #expect(r.status == 200, "\(r.body)")
        }
        let again = try subscriber(3)
        for _ in 0..<300 where !again().contains("next") { try await Task.sleep(for: .milliseconds(10)) }
        let all = #"{"stops": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 21}, {"id": 22}]}"#
        #expect(again().contains(all), "\(again())")
        // Round robin put the first two on different replicas: the killed one's subscriber was cut.
        #expect(subscribers.contains { $0().contains("closed") }, "\(subscribers.map { $0() })")
        await drop()
    }
}
