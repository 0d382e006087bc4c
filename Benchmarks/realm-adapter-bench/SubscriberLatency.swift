import Foundation
import HummingbirdWSClient
import Logging
import RealmAdapter
import Synchronization

/// The subscribers of `serve --client swift`: graphql-transport-ws connections on SwiftNIO
/// (hummingbird-websocket's client) in the benchmark's own process, each subscribing to the
/// newest tick and recording, per message, now minus the tick's commit time. A native client
/// costs a few µs a message where Python's costs about 100 µs, so that the figure is the
/// server's more than the client's (both still share the machine's two cores).
struct SubscriberLatency: Sendable {
    let url: String
    let token: String
    let subscribers: Int
    let commits: Int

    static let query = #"subscription { ticks(sortBy: "id", descending: true, take: 1) { id at } }"#

    final class Record: Sendable {
        let latencies = Mutex<[Double]>([])
        let ready = Mutex(0)
    }

    /// Connects every subscriber, calls `go` once each has its first result, and returns every
    /// latency (ms) once each has seen tick `commits`.
    func run(_ go: @escaping @Sendable () async throws -> Void) async throws -> [Double] {
        let record = Record()
        var quiet = Logger(label: "bench-client")
        quiet.logLevel = .error
        let logger = quiet
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 1 << 20, additionalHeaders: [.secWebSocketProtocol: "graphql-transport-ws"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<subscribers {
                group.addTask {
                    try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
                        inbound, outbound, _ in
                        try await subscribe(inbound, outbound, record)
                    }
                }
                // Connect in waves, so that the server's accept queue is not what is measured.
                if i % 50 == 49 { try await Task.sleep(for: .milliseconds(20)) }
            }
            while record.ready.withLock({ $0 }) < subscribers { try await Task.sleep(for: .milliseconds(10)) }
            try await go()
            try await group.waitForAll()
        }
        return record.latencies.withLock { $0 }
    }

    func subscribe(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, _ record: Record)
        async throws
    {
        try await outbound.write(
            .text(#"{"type":"connection_init","payload":{"Authorization":"\#(token)"}}"#))
        var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
        guard case .text(let ack)? = try await messages.next(), ack.contains("connection_ack") else {
            throw RealmAdapterError(.invalidValue, "the server did not acknowledge the connection")
        }
        let payload = JSONValue.object([.init("query", .string(Self.query))]).serialized()
        try await outbound.write(.text(#"{"id":"1","type":"subscribe","payload":\#(payload)}"#))
        var first = true
        while case .text(let text)? = try await messages.next() {
            let now = Date().timeIntervalSince1970 * 1e6
            // The newest tick's id and commit time, read off the message without parsing the
            // whole of it (a full JSON parse per message was the client's largest cost).
            guard text.utf8.starts(with: #"{"type":"next""#.utf8) else { continue }
            if first {
                first = false
                record.ready.withLock { $0 += 1 }
                continue
            }
            guard let id = Self.number(after: #""id":"#, in: text), let at = Self.number(after: #""at":"#, in: text)
            else { throw RealmAdapterError(.invalidValue, "a message without a tick: \(text)") }
            record.latencies.withLock { $0.append((now - at) / 1000) }
            if id >= Double(commits) { return try await outbound.close(.normalClosure, reason: nil) }
        }
    }

    /// The number that follows the last `key` in `text` (a plain byte search: the generic
    /// `ranges(of:)` cost more than the JSON parse it replaced).
    static func number(after key: String, in text: String) -> Double? {
        let bytes = Array(text.utf8)
        let key = Array(key.utf8)
        var i = bytes.count - key.count
        while i >= 0, !bytes[i..<(i + key.count)].elementsEqual(key) { i -= 1 }
        guard i >= 0 else { return nil }
        var end = i + key.count
        while end < bytes.count, bytes[end] != UInt8(ascii: ","), bytes[end] != UInt8(ascii: "}") { end += 1 }
        return Double(String(decoding: bytes[(i + key.count)..<end], as: UTF8.self))
    }
}
