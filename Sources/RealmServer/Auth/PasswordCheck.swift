import Foundation
import NIOPosix
import RealmAdapter
import Synchronization

/// Every password check of the server (`POST /auth`, `PUT /auth/password`, Studio's login), with a
/// limit on failures: past `server.failedLoginLimit` wrong passwords for one user name within
/// `server.failedLoginWindow`, that name's logins are refused (429) until the oldest failure is
/// out of the window, without a password being checked. Guessing then costs the guesser time and
/// the server no bcrypt. The count is per process (behind a load balancer, each replica counts its
/// own) and per account (or, for names no user has, per name, so that the answers do not tell
/// which names exist): anyone may hold a known name back for the window, as with any such limit.
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
        // Counted by the account the name reaches, as the directory compares names (its case and
        // collation rules), so that another spelling of a name shares its count. A name no user
        // has is counted too, by its text (ASCII letters folded, as SQLite's NOCASE does): held
        // back alike, it does not tell whether a user has it.
        let key = try await NIOThreadPool.singleton.runIfActive { [users] in
            guard (try? UserDirectory.check(name: name)) != nil else { return nil as String? }
            return try users.user(named: name).map { "id:" + $0.id } ?? "name:" + Self.folded(name)
        }
        // Counted as a failure from the start, so that guesses sent at once cannot all pass
        // before the first is known wrong; forgotten if it succeeds.
        if let key, let wait = failures.admit(key, limit: limit, window: window) {
            throw ServerError.tooManyLogins(wait)
        }
        // Bcrypt is slow by design (tens of ms a password): off Swift's few task threads, so that a
        // burst of logins (or of guesses) does not stall every other request.
        let user = try await NIOThreadPool.singleton.runIfActive { [users] in
            try users.verify(name: name, password: password)
        }
        if let key, user != nil { failures.forget(key) }
        return user
    }

    /// `name` with its ASCII letters in lower case.
    static func folded(_ name: String) -> String {
        String(
            String.UnicodeScalarView(name.unicodeScalars.map { ("A"..."Z").contains($0) ? .init($0.value + 32)! : $0 }))
    }
}

/// Recent login attempts that did not succeed, by account (`id:<user id>`) or, for names no user
/// has, by name (`name:<name>`); at most `bound` keys, names forgotten first.
private final class FailedLogins: Sendable {
    private let times = Mutex<[String: [ContinuousClock.Instant]]>([:])
    private static let bound = 100_000

    /// Counts an attempt for `key`; or, if `limit` are in the window already, how long until the
    /// oldest leaves it (and counts nothing).
    func admit(_ key: String, limit: Int, window: Duration) -> Duration? {
        let now = ContinuousClock.now
        return times.withLock { t in
            let recent = (t[key] ?? []).filter { now - $0 < window }
            if recent.count >= limit { return window - (now - recent[recent.count - limit]) }
            if t.count >= Self.bound && t[key] == nil {
                // Keys whose attempts all left the window go; then, if need be, the names (a
                // spray of them costs a bcrypt each: the server checks some tens a second).
                t = t.filter { _, times in times.contains { now - $0 < window } }
                if t.count >= Self.bound { t = t.filter { key, _ in key.hasPrefix("id:") } }
            }
            t[key] = recent + [now]
            return nil
        }
    }

    /// A login of `key` succeeded: its count starts again.
    func forget(_ key: String) {
        _ = times.withLock { $0.removeValue(forKey: key) }
    }
}
