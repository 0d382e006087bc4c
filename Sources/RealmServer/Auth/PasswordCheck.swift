import Foundation
import NIOPosix
import RealmAdapter
import Synchronization

/// Every password check of the server (`POST /auth`, `PUT /auth/password`, Studio's login), with a
/// limit on failures: past `server.failedLoginLimit` wrong passwords for one user name within
/// `server.failedLoginWindow`, that name's logins are refused (429) until the oldest failure is
/// out of the window, without a password being checked. Guessing then costs the guesser time and
/// the server no bcrypt. The count is per process: behind a load balancer, each replica counts its own.
struct PasswordCheck: Sendable {
    let users: UserDirectory
    let limit: Int
    let window: Duration
    private let failures = FailedLogins()

    init(users: UserDirectory, configuration: RealmAdapter.ServerConfiguration) {
        self.users = users
        limit = configuration.failedLoginLimit
        window = configuration.failedLoginWindow
    }

    /// The user with `name` if `password` is theirs; nil if not. Throws while the name is held back.
    func verify(name: String, password: String) async throws -> User? {
        let key = name.lowercased()  // names are unique without regard to case
        // Counted as a failure from the start, so that guesses sent at once cannot all pass
        // before the first is known wrong; forgotten if it succeeds.
        if let wait = failures.admit(key, limit: limit, window: window) { throw ServerError.tooManyLogins(wait) }
        // Bcrypt is slow by design (tens of ms a password): off Swift's few task threads, so that a
        // burst of logins (or of guesses) does not stall every other request.
        let user = try await NIOThreadPool.singleton.runIfActive { [users] in
            try users.verify(name: name, password: password)
        }
        if user != nil { failures.forget(key) }
        return user
    }
}

/// Recent login attempts by user name that did not succeed, bounded: names whose attempts all
/// left the window go first.
private final class FailedLogins: Sendable {
    private let times = Mutex<[String: [ContinuousClock.Instant]]>([:])
    /// How many names are kept at most (an attacker trying many names cannot grow it past this).
    private static let names = 100_000

    /// Counts an attempt for `name`; or, if `limit` are in the window already, how long until
    /// the oldest leaves it (and counts nothing).
    func admit(_ name: String, limit: Int, window: Duration) -> Duration? {
        let now = ContinuousClock.now
        return times.withLock { t in
            let recent = (t[name] ?? []).filter { now - $0 < window }
            if recent.count >= limit { return window - (now - recent[recent.count - limit]) }
            if t.count >= Self.names, t[name] == nil {
                t = t.filter { _, times in times.contains { now - $0 < window } }
                if t.count >= Self.names { t.remove(at: t.startIndex) }
            }
            t[name] = recent + [now]
            return nil
        }
    }

    /// A login of `name` succeeded: its count starts again.
    func forget(_ name: String) {
        _ = times.withLock { $0.removeValue(forKey: name) }
    }
}
