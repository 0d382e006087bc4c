import Foundation
import NIOCore
import RealmAdapter
import Synchronization

/// One subscription of one WebSocket connection: its request, where its messages go, and what
/// it sent last.
final class SubscriptionMember: Sendable {
    let id: String
    let path: String
    let request: SubscriptionHub.Request
    /// `request.key`, computed once.
    let key: String
    /// The legacy protocol (`data` messages) rather than `graphql-transport-ws` (`next`).
    let legacy: Bool
    /// Who subscribed: in a Realm with fine-grained permissions, answers are theirs alone.
    let viewer: Viewer
    /// Which message carries an answer to this subscription: members that share it (the same
    /// id and protocol, on other connections) share one frame of each answer.
    let frameKey: String
    /// The event loop of the WebSocket connection: answers are written on it
    /// (``offer(_:version:frames:)``), with no task or actor between the hub and the socket.
    var eventLoop: any EventLoop { outbox.eventLoop }
    /// Where the connection's answers are written, past the frame encoder.
    private let outbox: NIOLoopBound<SubscriptionOutbox>
    /// The version of the last answer offered, and the last answer sent.
    private let sent = Mutex<(version: Int64, answer: Data?)>((-1, nil))

    init(
        id: String, path: String, request: SubscriptionHub.Request, legacy: Bool, viewer: Viewer,
        outbox: NIOLoopBound<SubscriptionOutbox>
    ) {
        self.viewer = viewer
        self.id = id
        self.path = path
        self.request = request
        key = request.key
        self.legacy = legacy
        frameKey = (legacy ? "data\u{0}" : "next\u{0}") + id
        self.outbox = outbox
    }

    /// Sends `answer`, the request's result on the Realm as of `version` or later, unless an
    /// answer of a later version was offered first (an answer never overtakes a newer one) or it
    /// is the one sent last. Called on the connection's event loop only, so that messages leave
    /// in the order of their versions.
    /// - Parameter frames: frames already encoded for this answer, by ``frameKey``, updated with
    ///   the one made here (a frame's bytes are shared, never copied per connection).
    /// - Returns: whether a message was written now (rather than not at all, or kept to be written
    ///   when the connection can take it: ``SubscriptionOutbox``).
    @discardableResult
    func offer(_ answer: Data, version: Int64, frames: inout [String: ByteBuffer]) -> Bool {
        eventLoop.assertInEventLoop()
        let frame: ByteBuffer? = sent.withLock { s in
            guard version > s.version else { return nil }
            s.version = version
            guard answer != s.answer else { return nil }
            s.answer = answer
            let frame = frames[frameKey] ?? Self.frame(answer, id: id, legacy: legacy)
            frames[frameKey] = frame
            return frame
        }
        guard let frame else { return false }
        return outbox.value.write(frame, for: ObjectIdentifier(self))
    }

    /// Sends nothing more (the client completed the subscription, or its connection ended), not
    /// even an answer waiting for the connection.
    func end() {
        sent.withLock { $0.version = .max }
        eventLoop.execute { self.outbox.value.forget(ObjectIdentifier(self)) }
    }

    /// The encoded text frame carrying `answer` (a GraphQL response, spliced in as it is: one
    /// answer, many subscribers, not parsed again for each). A server's frames are not masked, so
    /// the same bytes serve every connection.
    private static func frame(_ answer: Data, id: String, legacy: Bool) -> ByteBuffer {
        var message = ByteBuffer()
        message.writeString(#"{"type":"\#(legacy ? "data" : "next")","id":"#)
        message.writeBytes(JSONValue.string(id).utf8())
        message.writeString(#","payload":"#)
        message.writeBytes(answer.last == UInt8(ascii: "\n") ? answer.dropLast() : answer[...])
        message.writeString("}")
        var frame = ByteBuffer()
        frame.reserveCapacity(message.readableBytes + 10)
        frame.writeInteger(UInt8(0x81))  // FIN, text
        switch message.readableBytes {
        case ..<126: frame.writeInteger(UInt8(message.readableBytes))
        case ...Int(UInt16.max): frame.writeMultipleIntegers(UInt8(126), UInt16(message.readableBytes))
        default: frame.writeMultipleIntegers(UInt8(127), UInt64(message.readableBytes))
        }
        frame.writeBuffer(&message)
        return frame
    }
}
