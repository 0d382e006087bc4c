import Foundation
import TestSupport
import Testing

/// What `serve` does with connections that do not behave: bodies too large, clients that say
/// nothing or say too much before a request begins. A client on a plain socket (`rawhttp.py`)
/// sends what no HTTP library would, and reports what came back and when the server closed.
@Suite(.serialized) struct ServeConnectionTests {
    /// What `rawhttp.py MODE` saw within `seconds`.
    struct Seen {
        let status: Int?
        let body: String
        let closedAfter: Double?
        let senderDone: Bool?
        let raw: String
    }

    static func raw(_ port: Int, _ mode: String, seconds: Double) async throws -> Seen {
        let r = try await ChildProcess.run(
            "/usr/bin/env",
            ["python3", ServeTests.Server.script("rawhttp.py"), mode, "\(port)", "\(seconds)"])
        try #require(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        return Seen(
            status: json["status"] as? Int, body: json["body"] as? String ?? "",
            closedAfter: json["closed_after"] as? Double, senderDone: json["sender_done"] as? Bool, raw: r.stdout)
    }

    /// A body past the limit (1 MiB) gets 413 and the connection is closed: before, with
    /// `Connection: close` it was neither read nor closed, and the client's sending of the
    /// rest of its 20 MB hung until its own timeout (a socket and a task held on the server).
    @Test func aBodyTooLargeIsRefusedAndTheConnectionClosed() async throws {
        let s = try await ServeTests.Server()
        try await s.start()
        let big = try await Self.raw(s.port, "big", seconds: 5)
        #expect(big.status == 413 && big.body.contains("larger than 1048576 bytes"), "\(big.raw)")
        #expect((big.closedAfter ?? 99) < 2, "the connection stayed open: \(big.raw)")
        #expect(big.senderDone == true, "the client's body was neither read nor refused: \(big.raw)")
        // The server goes on.
        #expect(try await s.curl("POST", "/auth", "{}").status == 400)
    }

    /// A connection must send its request's header section within `server.requestHeaderTimeout`
    /// (10 seconds by default): before, one that sent nothing, or half a request line, held a
    /// socket for ever (Hummingbird's idle timeout starts only with a request, and was off).
    @Test func silentAndHalfSentConnectionsAreClosed() async throws {
        let s = try await ServeTests.Server()
        try await s.start()
        let port = s.port
        async let silent = Self.raw(port, "silent", seconds: 14)
        async let half = Self.raw(port, "half", seconds: 14)
        for seen in [try await silent, try await half] {
            let closed = seen.closedAfter ?? 99
            #expect(closed >= 9 && closed < 13, "\(seen.raw)")
        }
        #expect(try await s.curl("POST", "/auth", "{}").status == 400)
    }

    /// A request line or a header section past 64 KiB gets 414 or 431 and a close: before, a
    /// 100 KB request line got no answer at all (NIO's decoder failed before Hummingbird's
    /// error handling was in place) and the connection stayed open.
    @Test func aRequestLineOrHeadTooLongIsAnsweredAndClosed() async throws {
        let s = try await ServeTests.Server()
        try await s.start()
        let line = try await Self.raw(s.port, "longline", seconds: 5)
        #expect(line.status == 414 && line.body.contains("send the query by POST"), "\(line.raw)")
        #expect((line.closedAfter ?? 99) < 2, "\(line.raw)")
        let head = try await Self.raw(s.port, "longhead", seconds: 5)
        #expect(head.status == 431 && head.body.contains("header fields"), "\(head.raw)")
        #expect((head.closedAfter ?? 99) < 2, "\(head.raw)")
        #expect(try await s.curl("POST", "/auth", "{}").status == 400)
    }
}
