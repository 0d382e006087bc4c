import Foundation
import NIOCore
import NIOWebSocket
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
    /// Which message carries an answer to this subscription: members that share it (the same
    /// id and protocol, on other connections) share one frame of each answer.
    let frameKey: String
    /// The WebSocket connection: answers are written to it on its event loop (``offer(_:version:frames:)``),
    /// with no task or actor between the hub and the socket.
    let channel: any Channel
    /// The version of the last answer offered, and the last answer sent.
    private let sent = Mutex<(version: Int64, answer: Data?)>((-1, nil))

    init(
        id: String, path: String, request: SubscriptionHub.Request, legacy: Bool,
        channel: any Channel
    ) {
        self.id = id
        self.path = path
        self.request = request
        key = request.key
        self.legacy = legacy
        frameKey = (legacy ? "data\u{0}" : "next\u{0}") + id
        self.channel = channel
    }

    /// Sends `answer`, the request's result on the Realm as of `version` or later, unless an
    /// answer of a later version was offered first (an answer never overtakes a newer one) or it
    /// is the one sent last. Called on the connection's event loop only, so that messages leave
    /// in the order of their versions.
    /// - Parameter frames: frames already made for this answer, by ``frameKey``, updated with
    ///   the one made here (a frame's bytes are shared, never copied per connection).
    /// - Returns: whether a message was written.
    @discardableResult
    func offer(_ answer: Data, version: Int64, frames: inout [String: WebSocketFrame]) -> Bool {
        channel.eventLoop.assertInEventLoop()
        let frame: WebSocketFrame? = sent.withLock { s in
            guard version > s.version else { return nil }
            s.version = version
            guard answer != s.answer else { return nil }
            s.answer = answer
            let frame = frames[frameKey] ?? Self.frame(answer, id: id, legacy: legacy)
            frames[frameKey] = frame
            return frame
        }
        guard let frame else { return false }
        channel.writeAndFlush(frame, promise: nil)
        return true
    }

    /// Sends nothing more (the client completed the subscription, or its connection ended).
    func end() {
        sent.withLock { $0.version = .max }
    }

    /// The text frame carrying `answer` (a GraphQL response, spliced in as it is: one answer, many
    /// subscribers, not parsed again for each).
    private static func frame(_ answer: Data, id: String, legacy: Bool) -> WebSocketFrame {
        var bytes = ByteBuffer()
        bytes.writeString(#"{"type":"\#(legacy ? "data" : "next")","id":"#)
        bytes.writeBytes(JSONValue.string(id).utf8())
        bytes.writeString(#","payload":"#)
        bytes.writeBytes(answer.last == UInt8(ascii: "\n") ? answer.dropLast() : answer[...])
        bytes.writeString("}")
        return WebSocketFrame(fin: true, opcode: .text, data: bytes)
    }
}
