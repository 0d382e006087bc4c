import NIOCore

/// Guards the start of a connection, before an HTTP decoder sees its bytes: the first request's
/// header section must arrive within `timeout` and be at most ``maxHead`` bytes.
///
/// Hummingbird's idle timeout starts only once a request head has been decoded (with a WebSocket
/// upgrade on offer, its handlers join the pipeline then), so a client that connected and sent
/// nothing, or half a request line, held a socket for ever; and NIO's decoder fails past 80 KiB
/// before anything can answer, so a 100 KB request line got no answer at all. Later requests on
/// the connection are Hummingbird's (its idle timeout), and a WebSocket's are its own: the guard
/// leaves the pipeline once the first header section is complete.
final class RequestHeadGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The longest header section (request line included) answered: below NIO's 80 KiB.
    static let maxHead = 64 * 1024

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// Bytes of the header section so far (CR and LF before the request line not counted).
    private var seen = 0
    private var lineEnded = false
    /// The last four bytes, to find the blank line that ends the section.
    private var tail: UInt32 = 0
    private var refused = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    private func start(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let buffer = unwrapInboundIn(data)
        for byte in buffer.readableBytesView {
            if seen == 0 && (byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")) { continue }
            seen += 1
            if byte == UInt8(ascii: "\n") { lineEnded = true }
            tail = tail << 8 | UInt32(byte)
            if tail == 0x0D0A_0D0A || tail & 0xFFFF == 0x0A0A {
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            if seen > Self.maxHead {
                refuse(context, lineEnded ? ServerError.headTooLarge(Self.maxHead) : .requestLineTooLong(Self.maxHead))
                return
            }
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if refused { context.read() } else { context.fireChannelReadComplete() }
    }

    /// Answers `error` in HTTP/1.1 (the decoder has not made a request of it, and will not) and
    /// closes the connection once the client has read it.
    private func refuse(_ context: ChannelHandlerContext, _ error: ServerError) {
        refused = true
        deadline?.cancel()
        let body = RealmHTTPServer.errorBody(error.message)
        let head =
            "HTTP/1.1 \(error.status) \(error.status == 414 ? "URI Too Long" : "Request Header Fields Too Large")\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        context.write(NIOAny(ByteBuffer(string: head + body)), promise: nil)
        Lingering.close(context)
    }
}
