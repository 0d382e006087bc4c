import NIOCore
import NIOWebSocket

/// Where one WebSocket connection's subscription answers are written, and what waits while its
/// client reads slower than answers come.
///
/// It sits just before the WebSocket frame encoder: an answer comes as a frame encoded once for
/// all its subscribers (``SubscriptionMember``) and is written from here, past the encoder. While
/// the connection is not writable (more than NIO's high water mark is waiting: the client reads
/// slowly, or not at all), each subscription keeps only its newest answer, which replaces the one
/// waiting, and they go out when the connection drains. So a stalled client costs the server one
/// answer per subscription, not one per change, and it reads the current result when it resumes.
/// Used on the connection's event loop only.
final class SubscriptionOutbox: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private var context: ChannelHandlerContext?
    /// The answers waiting for the connection, by subscription, in the order they began waiting.
    private var waiting: [ObjectIdentifier: ByteBuffer] = [:]
    private var order: [ObjectIdentifier] = []

    /// Adds an outbox to `channel`'s pipeline, before its WebSocket frame encoder.
    static func install(on channel: any Channel) async throws -> NIOLoopBound<SubscriptionOutbox> {
        let loop = channel.eventLoop
        return try await loop.submit {
            let pipeline = channel.pipeline.syncOperations
            let outbox = SubscriptionOutbox()
            try pipeline.addHandler(outbox, position: .before(try pipeline.handler(type: WebSocketFrameEncoder.self)))
            return NIOLoopBound(outbox, eventLoop: loop)
        }.get()
    }

    /// Writes `frame`, the newest answer of the subscription `member`, or keeps it (instead of any
    /// answer of `member` waiting) until the connection can take it.
    /// - Returns: whether it was written now.
    func write(_ frame: ByteBuffer, for member: ObjectIdentifier) -> Bool {
        guard let context else { return false }
        if waiting.isEmpty, context.channel.isWritable {
            context.writeAndFlush(NIOAny(frame), promise: nil)
            return true
        }
        if waiting.updateValue(frame, forKey: member) == nil {
            order.append(member)
        } else {
            ServerMetrics.superseded.increment()
        }
        if context.channel.isWritable { drain(context) }
        return false
    }

    /// Drops what waits for `member` (its subscription ended).
    func forget(_ member: ObjectIdentifier) {
        guard waiting.removeValue(forKey: member) != nil else { return }
        order.removeAll { $0 == member }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        (waiting, order) = ([:], [])
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { drain(context) }
        context.fireChannelWritabilityChanged()
    }

    private func drain(_ context: ChannelHandlerContext) {
        guard !order.isEmpty else { return }
        let frames = order.compactMap { waiting[$0] }
        (waiting, order) = ([:], [])
        for frame in frames { context.write(NIOAny(frame), promise: nil) }
        context.flush()
        ServerMetrics.messages.increment(by: frames.count)
    }
}
