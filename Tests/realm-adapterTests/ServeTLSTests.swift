import Foundation
import TestSupport
import Testing

/// `server.tls`: HTTPS and WSS with a certificate openssl makes; curl, gql and its WebSocket
/// transport verify it against that certificate as their CA.
@Suite(.serialized) struct ServeTLSTests {
    typealias Server = ServeTests.Server

    @Test func httpsAndWSSWithTheConfiguredCertificate() async throws {
        let certs = NSTemporaryDirectory() + "realm-adapter-tls-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: certs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: certs) }
        _ = try await selfSignedCertificate(in: certs)
        let s = try await Server(
            server: #", "tls": {"certificateFile": "\#(certs)/cert.pem", "keyFile": "\#(certs)/key.pem"}"#)
        s.caFile = certs + "/cert.pem"
        try await s.start()

        // curl and gql over HTTPS, trusting the certificate.
        let alice = try await s.login("alice")
        #expect(
            try await s.graphQL("/shop", alice, "{ stop(id: 1) { name } }") == #"{"data": {"stop": {"name": "Depot"}}}"#
        )

        // A subscription over WSS receives a change.
        let script = ServeTests.Server.script("subscribe.py")
        let out = s.dir + "/wss.out"
        let subscriber = try ChildProcess(
            "/usr/bin/env",
            [
                "SSL_CERT_FILE=" + certs + "/cert.pem", "python3", script, "wss://127.0.0.1:\(s.port)/graphql/shop",
                alice, #"subscription { stops(query: "id > 2") { id name } }"#, "2",
            ],
            stdout: out, stderr: s.dir + "/wss.err")
        func lines() -> [String] {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        for _ in 0..<500 where !lines().contains(#"{"ready": true}"#) && subscriber.isRunning {
            try await Task.sleep(for: .microseconds(20_000))
        }
        _ = try await s.graphQL("/shop", alice, #"mutation { createStop(input: {id: 4, name: "Weir"}) { id } }"#)
        #expect(
            await subscriber.wait() == 0, "\((try? String(contentsOfFile: s.dir + "/wss.err", encoding: .utf8)) ?? "")")
        #expect(lines().last?.contains(#"{"id": 4, "name": "Weir"}"#) == true, "\(lines())")

        // Plain HTTP is not spoken there, and a client that does not trust the certificate refuses it.
        let plain = try await ChildProcess.run(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(s.port)/auth"])
        #expect(plain.stdout != "400" && plain.stdout != "200", "\(plain.stdout)")
        let untrusted = try await ChildProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", s.url + "/auth"])
        #expect(untrusted.status == 60, "curl exit \(untrusted.status): the certificate should not verify")
        // TLS 1.1 is refused (the client lowered its own floor, so that only the server can say no).
        let old = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "--cacert", certs + "/cert.pem", "--tlsv1.1", "--tls-max", "1.1",
                "--ciphers", "DEFAULT@SECLEVEL=0", s.url + "/auth",
            ])
        #expect(old.status == 35, "curl exit \(old.status): TLS 1.1 should be refused")

        // A certificate that cannot be read stops serve at start, naming the setting.
        let bad = try await Server(
            server: #", "tls": {"certificateFile": "\#(certs)/none.pem", "keyFile": "\#(certs)/key.pem"}"#)
        let serve = try await bad.cli(["serve", "--config", bad.config])
        #expect(serve.status != 0 && serve.stderr.contains("server.tls.certificateFile"), "\(serve.stderr)")
    }
}
