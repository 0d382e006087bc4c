import NIOCore
import NIOHTTPTypes

/// Closes the connection after a response that says `Connection: close` (``RealmHTTPServer``
/// sends it with a 413), reading nothing more of it.
///
/// Hummingbird closes a connection only for a request that says so, and first reads what is
/// left of the request's body: a 20 MB body past the limit was read in full, or, with a request's
/// `Connection: close`, neither read nor closed, and the client's sending of it hung.
final class CloseAfterRefusal: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The response being written says `Connection: close`.
    private var closing = false
    /// It has been written: what arrives now is dropped.
    private var closed = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closing = head.headerFields[.connection] == "close"
            context.write(data, promise: promise)
        case .end where closing && !closed:
            closed = true
            context.write(data, promise: promise)
            Lingering.close(context)
        default:
            context.write(data, promise: promise)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !closed { context.fireChannelRead(data) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if closed { context.read() } else { context.fireChannelReadComplete() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !closed { context.fireErrorCaught(error) }
    }
}
