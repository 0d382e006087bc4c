import NIOCore

/// How the server closes a connection whose client may still be sending (a body it refused, a
/// header section too long): it half-closes, so the client reads the answer and then the end of
/// the stream, drops what else arrives, and closes for good after ``time``. Closing at once with
/// unread bytes would reset the connection, and a client could lose the answer with it.
enum Lingering {
    static let time: TimeAmount = .seconds(1)

    /// Closes `context`'s channel, as above, once what was written before is flushed.
    static func close(_ context: ChannelHandlerContext) {
        context.flush()
        context.close(mode: .output, promise: nil)
        context.eventLoop.assumeIsolated().scheduleTask(in: time) { context.close(promise: nil) }
    }
}
