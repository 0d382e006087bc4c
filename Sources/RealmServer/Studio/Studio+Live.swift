import Foundation
import Hummingbird
import RealmAdapter
import ServiceLifecycle

/// Pages that follow their Realm: `GET /studio/events` streams the store's changes as
/// server-sent events, and `studio.js` fetches the page again when one arrives, without a reload.
/// Commits of every process reach it (the store's change stream polls or listens for them).
extension Studio {
    /// `GET /studio/events?path=…`: an event per change of the Realm at `path`, or of any Realm
    /// the session may read; a comment every 15 s keeps proxies from closing the stream. It ends
    /// when the browser goes, or the server shuts down.
    func events(_ session: StudioSession, _ query: [String: String]) throws -> Response {
        let only = query["path"].flatMap { $0.isEmpty ? nil : $0 }
        if let only { _ = try access(session, only) }
        let (users, user, store) = (server.users, session.user, server.store)
        @Sendable func visible(_ change: RealmChange) -> Bool {
            if let only { return change.path == only }
            guard let user, !user.isAdmin else { return true }
            return ((try? users.level(of: user, at: change.path)) ?? .none) >= .read
        }
        let body = ResponseBody { writer in
            let (stream, feed) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(256))
            let changes = Task {
                for await change in store.changes() where visible(change) {
                    let data = JSONValue.object([
                        .init("path", .string(change.path)), .init("version", .int(change.version)),
                    ])
                    feed.yield(ByteBuffer(string: "event: change\ndata: \(data.serialized())\n\n"))
                }
            }
            let beats = Task {
                while (try? await Task.sleep(for: Self.heartbeat)) != nil { feed.yield(ByteBuffer(string: ":\n\n")) }
            }
            defer {
                changes.cancel()
                beats.cancel()
            }
            feed.yield(ByteBuffer(string: "retry: 2000\n\n"))
            // Ended when the server shuts down gracefully, so that it need not wait for the browser.
            try? await withGracefulShutdownHandler {
                for await chunk in stream { try await writer.write(chunk) }
            } onGracefulShutdown: {
                feed.finish()
            }
            try? await writer.finish(nil)
        }
        var headers = StudioAssets.headers
        headers[.contentType] = "text/event-stream"
        return Response(status: .ok, headers: headers, body: body)
    }

    static let heartbeat = Duration.seconds(15)

    /// The address of the events of the Realm at `path` (of every Realm when nil).
    static func events(_ path: String?) -> String { link("events", path.map { ["path": $0] } ?? [:]) }
}
