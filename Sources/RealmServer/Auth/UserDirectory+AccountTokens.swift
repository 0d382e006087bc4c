import Crypto
import Foundation
import HummingbirdBcrypt
import RealmAdapter

/// One-time tokens mailed to users: a password reset, an address confirmation. The directory
/// keeps only their SHA-256 (a copy of it gives nobody a token), each is good once and for
/// `server.email.tokenLifetime`, and a user gets at most a few an hour.
extension UserDirectory {
    public enum AccountTokenPurpose: String, Sendable {
        case passwordReset = "reset"
        case emailConfirmation = "confirm"
    }

    /// How many tokens of one purpose a user may be sent in an hour.
    static let tokensPerHour = 5

    /// A new token for `user`, or nil when they were sent ``tokensPerHour`` within the hour.
    func issueAccountToken(
        for user: User, _ purpose: AccountTokenPurpose, lifetime: Duration, now: Date = Date()
    ) throws -> String? {
        let token = Self.secretToken()
        let seconds = Int64(now.timeIntervalSince1970)
        return try db.write { db in
            try db.execute(sql: "DELETE FROM account_token WHERE expires < ?", arguments: [seconds - 3600])
            let recent =
                try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM account_token WHERE user_id = ? AND purpose = ? AND created > ?",
                    arguments: [user.id, purpose.rawValue, seconds - 3600]) ?? 0
            guard recent < Self.tokensPerHour else { return nil }
            try db.execute(
                sql: "INSERT INTO account_token (id, user_id, purpose, created, expires) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    Self.digest(token), user.id, purpose.rawValue, seconds, seconds + Int64(lifetime.seconds),
                ])
            return token
        }
    }

    /// Spends `token`: the user it was issued to, once, before it expires. `apply` runs in the
    /// same transaction, so a token is spent only if what it was for is done.
    func redeemAccountToken<T>(
        _ token: String, _ purpose: AccountTokenPurpose, now: Date = Date(),
        _ apply: (any StoreConnection, User) throws -> T
    ) throws -> T {
        try db.write { db in
            guard
                let row = try StoreRow.fetchOne(
                    db, sql: "SELECT user_id, expires, used FROM account_token WHERE id = ? AND purpose = ?",
                    arguments: [Self.digest(token), purpose.rawValue])
            else { throw ServerError.accountTokenUnknown(purpose) }
            guard row[2] as Int == 0 else { throw ServerError.accountTokenUsed(purpose) }
            guard row[1] as Int64 >= Int64(now.timeIntervalSince1970) else {
                throw ServerError.accountTokenExpired(purpose)
            }
            guard
                let user = try StoreRow.fetchOne(
                    db, sql: "SELECT \(User.columns) FROM \"user\" WHERE id = ?", arguments: [row[0] as String]
                ).map(User.init(row:))
            else { throw ServerError.userGone() }
            try db.execute(sql: "UPDATE account_token SET used = 1 WHERE id = ?", arguments: [Self.digest(token)])
            return try apply(db, user)
        }
    }

    /// Completes a password reset: the token's user gets `password`, and every older token ends.
    public func resetPassword(token: String, password: String) throws -> User {
        try Self.check(password: password)
        let hash = Bcrypt.hash(password, cost: Self.cost)
        return try redeemAccountToken(token, .passwordReset) { db, user in
            try db.execute(
                sql: "UPDATE \"user\" SET password_hash = ?, generation = generation + 1 WHERE id = ?",
                arguments: [hash, user.id])
            try Self.spendResetTokens(db, of: user.id)
            return user
        }
    }

    /// Ends the user's other reset links: a password set, by a reset or otherwise, leaves none open.
    static func spendResetTokens(_ db: any StoreConnection, of userId: String) throws {
        try db.execute(
            sql: "UPDATE account_token SET used = 1 WHERE user_id = ? AND purpose = ?",
            arguments: [userId, AccountTokenPurpose.passwordReset.rawValue])
    }

    /// Confirms the address of the token's user.
    public func confirmEmail(token: String) throws -> User {
        try redeemAccountToken(token, .emailConfirmation) { db, user in
            try db.execute(sql: "UPDATE \"user\" SET email_confirmed = 1 WHERE id = ?", arguments: [user.id])
            return user
        }
    }

    /// A password user whose name is `address` (names compare without case).
    func passwordUser(address: String) throws -> User? {
        try db.read { db in
            try StoreRow.fetchOne(
                db, sql: "SELECT \(User.columns) FROM \"user\" WHERE name = ? AND provider = 'password'",
                arguments: [address]
            ).map(User.init(row:))
        }
    }

    /// 256 random bits, as 64 hexadecimal digits: a token nobody guesses.
    static func secretToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", g.next() as UInt64) }.joined()
    }

    /// What the directory keeps of a secret token.
    static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
