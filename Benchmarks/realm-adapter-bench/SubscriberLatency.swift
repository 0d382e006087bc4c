import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import RealmAdapter
import Synchronization

/// The subscribers of `serve --client swift`: graphql-transport-ws connections in the benchmark's
/// own process, each a SwiftNIO channel whose handler (``Subscriber``) subscribes to the newest
/// tick and records, per message, now minus the tick's commit time, on the event loop that read
/// it. No task or stream stands between the socket and the clock: the client shares the machine's
/// two cores with the server, so what it costs per message is kept to the read itself.
struct SubscriberLatency: Sendable {
    let port: Int
    let path: String
    let token: String
    let subscribers: Int
    let commits: Int

    static let query = #"subscription { ticks(sortBy: "id", descending: true, take: 1) { id at } }"#

    /// What the subscribers share: how many have their first answer, how many the last tick,
    /// every latency, and why one stopped early, if one did.
    final class Record: Sendable {
        let latencies = Mutex<[Double]>([])
        let ready = Mutex(0)
        let finished = Mutex(0)
        let failure = Mutex<(any Error)?>(nil)
    }

    /// Connects every subscriber, calls `go` once each has its first result, and returns every
    /// latency (ms) once each has seen tick `commits`.
    func run(_ go: @escaping @Sendable () async throws -> Void) async throws -> [Double] {
        let record = Record()
        // The subscribers' own event loops: were they the server's (NIO's singleton group), each
        // connection and its accepted peer would take turns at one counter, and every one of the
        // server's connections would land on one loop, and so on one core.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var channels: [any Channel] = []
        var failure: (any Error)?
        do {
            for i in 0..<subscribers {
                channels.append(try await connect(record, on: loops))
                // Connect in waves, so that the server's accept queue is not what is measured.
                if i % 50 == 49 { try await Task.sleep(for: .milliseconds(20)) }
            }
            try await until(record) { $0.ready.withLock { $0 } }
            try await go()
            // Nobody closes before everyone has the last tick: closing loads the machine too.
            try await until(record) { $0.finished.withLock { $0 } }
        } catch {
            failure = error
        }
        for c in channels { try? await c.close() }
        try? await loops.shutdownGracefully()
        if let failure { throw failure }
        return record.latencies.withLock { $0 }
    }

    /// Waits until `count` reaches the number of subscribers, or throws why one stopped before.
    private func until(_ record: Record, _ count: (Record) -> Int) async throws {
        while count(record) < subscribers {
            if let failure = record.failure.withLock({ $0 }) { throw failure }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// One subscriber: the WebSocket upgrade of `path`, ``Subscriber`` on the channel, and
    /// `connection_init`.
    private func connect(_ record: Record, on loops: MultiThreadedEventLoopGroup) async throws -> any Channel {
        let upgraded = try await ClientBootstrap(group: loops)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<any Channel>(maxFrameSize: 1 << 20) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(Subscriber(commits: commits, record: record))
                            return channel
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "127.0.0.1:\(port)")
                    headers.add(name: "Sec-WebSocket-Protocol", value: "graphql-transport-ws")
                    headers.add(name: "Content-Length", value: "0")
                    let upgrade = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: HTTPRequestHead(
                            version: .http1_1, method: .GET, uri: path, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.eventLoop.makeFailedFuture(
                                RealmAdapterError(.invalidValue, "the server refused the WebSocket upgrade"))
                        })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: upgrade))
                }
            }
        // The first message once the upgrade is done, when the HTTP handlers have left the pipeline.
        let channel = try await upgraded.get()
        try await channel.writeAndFlush(
            Subscriber.text(#"{"type":"connection_init","payload":{"Authorization":"\#(token)"}}"#))
        return channel
    }

    /// A subscriber's handler, after `connection_init`: `subscribe` once acknowledged, then one
    /// latency per message.
    final class Subscriber: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        let commits: Int
        let record: Record
        private var subscribed = false
        private var first = true
        private var finished = false
        private var latencies: [Double] = []

        init(commits: Int, record: Record) {
            self.commits = commits
            self.record = record
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text:
                let now = Date().timeIntervalSince1970 * 1e6
                received(Array(frame.data.readableBytesView), at: now, context)
            case .ping:
                let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.data)
                context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
            case .connectionClose:
                context.close(promise: nil)
            default:
                break
            }
        }

        /// One text message, read at `now` (µs since 1970).
        private func received(_ bytes: [UInt8], at now: Double, _ context: ChannelHandlerContext) {
            if !subscribed {
                guard bytes.starts(with: #"{"type":"connection_ack""#.utf8) else {
                    return fail(context, "the server did not acknowledge the connection")
                }
                subscribed = true
                let payload = JSONValue.object([.init("query", .string(SubscriberLatency.query))]).serialized()
                context.writeAndFlush(
                    wrapOutboundOut(Self.text(#"{"id":"1","type":"subscribe","payload":\#(payload)}"#)), promise: nil)
                return
            }
            // The newest tick's id and commit time, read off the message without parsing the
            // whole of it.
            guard bytes.starts(with: #"{"type":"next""#.utf8) else { return }
            if first {
                first = false
                record.ready.withLock { $0 += 1 }
                return
            }
            guard let id = Self.number(after: #""id":"#, in: bytes), let at = Self.number(after: #""at":"#, in: bytes)
            else { return fail(context, "a message without a tick: \(String(decoding: bytes, as: UTF8.self))") }
            latencies.append((now - at) / 1000)
            if id >= Double(commits), !finished {
                finished = true
                let mine = latencies
                record.latencies.withLock { $0 += mine }
                record.finished.withLock { $0 += 1 }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !finished { fail(context, "the server closed a subscriber's connection") }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            record.failure.withLock { $0 = $0 ?? error }
            context.close(promise: nil)
        }

        private func fail(_ context: ChannelHandlerContext, _ message: String) {
            errorCaught(context: context, error: RealmAdapterError(.invalidValue, message))
        }

        /// A client's text frame (masked, as a client's frames are).
        static func text(_ text: String) -> WebSocketFrame {
            WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: text))
        }

        /// The number that follows the last `key` in `bytes` (a plain byte search).
        static func number(after key: String, in bytes: [UInt8]) -> Double? {
            let key = Array(key.utf8)
            var i = bytes.count - key.count
            while i >= 0, !bytes[i..<(i + key.count)].elementsEqual(key) { i -= 1 }
            guard i >= 0 else { return nil }
            var end = i + key.count
            while end < bytes.count, bytes[end] != UInt8(ascii: ","), bytes[end] != UInt8(ascii: "}") { end += 1 }
            return Double(String(decoding: bytes[(i + key.count)..<end], as: UTF8.self))
        }
    }
}
