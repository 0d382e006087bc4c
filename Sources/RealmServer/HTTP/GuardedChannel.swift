import HummingbirdCore
import Logging
import NIOCore

/// A server child channel with a ``RequestHeadGuard`` in front of `inner`'s handlers.
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    /// How long a connection may take to send its first request's header section.
    let headTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RequestHeadGuard(timeout: headTimeout))
        }
        .flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
