import Foundation
import HTTPTypes
import Hummingbird
import RealmAdapter
import ServiceLifecycle
import Synchronization

/// Pages that follow their Realm: `GET /studio/events` streams the store's changes as
/// server-sent events, and `studio.js` fetches the page again when one arrives, without a reload.
/// Commits of every process reach it (the store's change stream polls or listens for them).
extension Studio {
    /// `GET /studio/events?path=…`: an event per change of the Realm at `path`, or of any Realm
    /// the session may read; a comment every 15 s keeps proxies from closing the stream. Every
    /// 2 s the session is checked again (logged out, expired, its user's level or admin rights
    /// gone: the stream ends). It ends when the browser goes, or the server shuts down. A stream
    /// counts against the user's quota of subscriptions.
    func events(_ session: StudioSession, _ query: [String: String]) throws -> Response {
        let only = query["path"].flatMap { $0.isEmpty ? nil : $0 }
        if let only { _ = try access(session, only) }
        let (users, user, store) = (server.users, session.user, server.store)
        guard let slot = QuotaSlot(server.quota, user?.id ?? "") else { throw ServerError.tooManyStreams() }
        @Sendable func visible(_ change: RealmChange) -> Bool {
            if let only { return change.path == only }
            guard let user, !user.isAdmin else { return true }
            return ((try? users.level(of: user, at: change.path)) ?? .none) >= .read
        }
        /// Whether the session still holds as it did: its login, its admin rights, its level.
        @Sendable func holds() -> Bool {
            guard let claims = session.claims, let user else { return true }
            guard claims.exp.value > Date() else { return false }
            guard let now = try? users.current(claims), now.isAdmin || !user.isAdmin else { return false }
            guard let only else { return true }
            return ((try? users.level(of: now, at: only)) ?? .none) >= .read
        }
        let body = ResponseBody { writer in
            defer { slot.giveBack() }
            let (stream, feed) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(256))
            let changes = Task {
                for await change in store.changes() where visible(change) {
                    let data = JSONValue.object([
                        .init("path", .string(change.path)), .init("version", .int(change.version)),
                    ])
                    feed.yield(ByteBuffer(string: "event: change\ndata: \(data.serialized())\n\n"))
                }
            }
            let checks = Task {
                var beat = 0
                while (try? await Task.sleep(for: Self.recheck)) != nil {
                    guard holds() else { return feed.finish() }
                    beat += 1
                    if beat % 7 == 0 { feed.yield(ByteBuffer(string: ":\n\n")) }  // about every 15 s
                }
            }
            defer {
                changes.cancel()
                checks.cancel()
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
        headers[.xAccelBuffering] = "no"  // a proxy passes each event on as it comes (nginx)
        return Response(status: .ok, headers: headers, body: body)
    }

    /// How often an open stream checks its session again.
    static let recheck = Duration.seconds(2)

    /// The address of the events of the Realm at `path` (of every Realm when nil).
    static func events(_ path: String?) -> String { link("events", path.map { ["path": $0] } ?? [:]) }
}

/// One of a user's subscriptions (``SubscriptionQuota``), given back once: when the stream ends,
/// or when its response goes without ever being written (the browser left first).
final class QuotaSlot: Sendable {
    let quota: SubscriptionQuota
    let owner: String
    let held = Mutex(true)

    init?(_ quota: SubscriptionQuota, _ owner: String) {
        guard quota.take(owner) else { return nil }
        self.quota = quota
        self.owner = owner
    }

    func giveBack() {
        if held.withLock({ h in
            defer { h = false }
            return h
        }) {
            quota.give(owner)
        }
    }

    deinit { giveBack() }
}

extension HTTPField.Name {
    static let xAccelBuffering = Self("X-Accel-Buffering")!
}
