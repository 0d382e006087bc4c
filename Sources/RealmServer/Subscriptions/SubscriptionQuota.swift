import Synchronization

/// The subscriptions each user holds, across their connections.
///
/// A connection holds at most ``SubscriptionSession/maxSubscriptions``, but a user could open
/// any number of connections, and each subscription runs its query after every commit of its
/// Realm: the quota bounds what one user can make the server do.
final class SubscriptionQuota: Sendable {
    /// Subscriptions one user may hold at once.
    static let perUser = 200
    private let counts = Mutex<[String: Int]>([:])

    /// Takes one for `user`; false when they hold ``perUser`` already.
    func take(_ user: String) -> Bool {
        counts.withLock {
            guard $0[user, default: 0] < Self.perUser else { return false }
            $0[user, default: 0] += 1
            return true
        }
    }

    /// Gives back `n` of `user`'s.
    func give(_ user: String, _ n: Int = 1) {
        guard n > 0 else { return }
        counts.withLock {
            let left = $0[user, default: 0] - n
            $0[user] = left > 0 ? left : nil
        }
    }
}
