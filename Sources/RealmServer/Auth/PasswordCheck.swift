import Foundation
import NIOPosix
import RealmAdapter
import Synchronization

/// Every password check of the server (`POST /auth`, `PUT /auth/password`, Studio's login), with a
/// limit on failures: past `server.failedLoginLimit` wrong passwords for one user name within
/// `server.failedLoginWindow`, that name's logins are refused (429) until the oldest failure is
/// out of the window, without a password being checked. Guessing then costs the guesser time and
/// the server no bcrypt. The count is per process (behind a load balancer, each replica counts its
/// own) and per account: anyone may hold a known name back for the window, as with any such limit.
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
        // collation rules), so that another spelling of a name shares its count; a name no user
        // has is not counted: there is no password to guess, and the counts stay as many as users.
        let account = try await NIOThreadPool.singleton.runIfActive { [users] in
            (try? UserDirectory.check(name: name)) == nil ? nil : try users.user(named: name)?.id
        }
        // Counted as a failure from the start, so that guesses sent at once cannot all pass
        // before the first is known wrong; forgotten if it succeeds.
        if let account, let wait = failures.admit(account, limit: limit, window: window) {
            throw ServerError.tooManyLogins(wait)
        }
        // Bcrypt is slow by design (tens of ms a password): off Swift's few task threads, so that a
        // burst of logins (or of guesses) does not stall every other request.
        let user = try await NIOThreadPool.singleton.runIfActive { [users] in
            try users.verify(name: name, password: password)
        }
        if let account, user != nil { failures.forget(account) }
        return user
    }
}

/// Recent login attempts that did not succeed, by user id.
private final class FailedLogins: Sendable {
    private let times = Mutex<[String: [ContinuousClock.Instant]]>([:])

    /// Counts an attempt for `account`; or, if `limit` are in the window already, how long until
    /// the oldest leaves it (and counts nothing).
    func admit(_ account: String, limit: Int, window: Duration) -> Duration? {
        let now = ContinuousClock.now
        return times.withLock { t in
            let recent = (t[account] ?? []).filter { now - $0 < window }
            if recent.count >= limit { return window - (now - recent[recent.count - limit]) }
            // Users whose attempts have all left the window, forgotten now and then.
            if t.count >= 1_000 && t.count.isMultiple(of: 1_000) {
                t = t.filter { _, times in times.contains { now - $0 < window } }
            }
            t[account] = recent + [now]
            return nil
        }
    }

    /// A login of `account` succeeded: its count starts again.
    func forget(_ account: String) {
        _ = times.withLock { $0.removeValue(forKey: account) }
    }
}
