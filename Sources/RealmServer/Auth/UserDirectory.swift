import Foundation
import GRDB
import HummingbirdBcrypt
import RealmAdapter

/// The server's users and the permissions on Realm paths, in `server.sqlite` in the store's
/// directory: `serve` and the `user` and `permission` commands share it, from any process.
/// Passwords are kept as bcrypt hashes (cost 10), never in the clear.
public final class UserDirectory: Sendable {
    let db: DatabaseQueue

    /// Opens (and creates) the directory of the store at `storeDirectory`.
    public init(storeDirectory: String) throws {
        try FileManager.default.createDirectory(atPath: storeDirectory, withIntermediateDirectories: true)
        var config = GRDB.Configuration()
        config.busyMode = .timeout(10)
        let file = storeDirectory + "/server.sqlite"
        db = try DatabaseQueue(path: file, configuration: config)
        // The password hashes are for this user's eyes only.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        // One process at a time (IMMEDIATE): two opening a directory of an earlier release must not
        // both add the column.
        try db.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                try Self.create(db)
                return .commit
            }
        }
    }

    /// The tables, made or brought up to date.
    static func create(_ db: Database) throws {
        // `generation` moves on with each new password: refresh tokens of an earlier one stop working.
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS user (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE,
                    password_hash TEXT NOT NULL, is_admin INTEGER NOT NULL, created TEXT NOT NULL,
                    generation INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE IF NOT EXISTS permission (path TEXT NOT NULL, user_id TEXT NOT NULL,
                    level INTEGER NOT NULL, PRIMARY KEY (path, user_id)) WITHOUT ROWID;
                """)
        // Users of provider jwt (added later: a directory made before has only password users).
        if try !db.columns(in: "user").contains(where: { $0.name == "provider" }) {
            try db.execute(sql: "ALTER TABLE user ADD COLUMN provider TEXT NOT NULL DEFAULT 'password'")
        }
    }

    static let cost: UInt8 = 10

    /// Adds a user; the name must be new.
    @discardableResult
    public func add(name: String, password: String, admin: Bool = false) throws -> User {
        try Self.check(name: name, password: password)
        let user = User(id: Self.newId(), name: name, isAdmin: admin)
        let hash = Bcrypt.hash(password, cost: Self.cost)
        try db.write { db in
            guard
                try Int.fetchOne(db, sql: "SELECT 1 FROM user WHERE name = ? COLLATE NOCASE", arguments: [name]) == nil
            else {
                throw ServerError.userExists(name)
            }
            try db.execute(
                sql: "INSERT INTO user (id, name, password_hash, is_admin, created) VALUES (?, ?, ?, ?, ?)",
                arguments: [user.id, name, hash, admin, Timestamp(Date()).iso8601])
        }
        return user
    }

    /// The user with `name` if `password` is theirs (bcrypt: deliberately slow).
    public func verify(name: String, password: String) throws -> User? {
        let row = try db.read { db in
            try Row.fetchOne(
                db,
                sql:
                    "SELECT id, name, is_admin, password_hash, generation FROM user "
                    + "WHERE name = ? AND provider = 'password'",
                arguments: [name])
        }
        guard let row else {
            // As slow as a wrong password, so that a name's existence does not show in the time.
            _ = Bcrypt.verify(password, hash: Self.decoy)
            return nil
        }
        guard (try? Self.check(name: name, password: password)) != nil, Bcrypt.verify(password, hash: row[3]) else {
            return nil
        }
        return User(id: row[0], name: row[1], isAdmin: row[2], generation: row[4])
    }

    static let decoy = Bcrypt.hash("realm-adapter decoy", cost: cost)

    public func user(named name: String) throws -> User? {
        try db.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(User.columns) FROM user WHERE name = ?", arguments: [name]
            )
            .map(User.init(row:))
        }
    }

    public func user(id: String) throws -> User? {
        try db.read { db in
            try Row.fetchOne(db, sql: "SELECT \(User.columns) FROM user WHERE id = ?", arguments: [id])
                .map(User.init(row:))
        }
    }

    /// Every user, by name.
    public func users() throws -> [User] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT \(User.columns) FROM user ORDER BY name")
                .map(User.init(row:))
        }
    }

    /// Removes a user and the permissions granted to them; false if there was none.
    public func remove(name: String) throws -> Bool {
        try db.write { db in
            guard let id = try String.fetchOne(db, sql: "SELECT id FROM user WHERE name = ?", arguments: [name]) else {
                return false
            }
            try db.execute(sql: "DELETE FROM permission WHERE user_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM user WHERE id = ?", arguments: [id])
            return true
        }
    }

    public func setPassword(name: String, password: String) throws {
        try Self.check(name: name, password: password)
        let hash = Bcrypt.hash(password, cost: Self.cost)
        try db.write { db in
            guard
                let provider = try String.fetchOne(
                    db, sql: "SELECT provider FROM user WHERE name = ?", arguments: [name])
            else { throw ServerError.noSuchUser(name) }
            guard provider == "password" else { throw ServerError.nameTaken(name, by: provider) }
            try db.execute(
                sql: "UPDATE user SET password_hash = ?, generation = generation + 1 WHERE name = ?",
                arguments: [hash, name])
        }
    }

    static func check(name: String, password: String) throws {
        try check(name: name)
        // bcrypt reads at most 72 bytes and stops at a NUL: anything past either would not count.
        guard password.count >= 8 else { throw ServerError.passwordTooShort() }
        guard password.utf8.count <= 72, !password.utf8.contains(0) else { throw ServerError.passwordUnusable() }
    }

    /// Refuses a name that is empty, longer than 256 characters, or has control characters (a NUL
    /// among them) or spaces at either end.
    static func check(name: String) throws {
        guard !name.isEmpty, name.count <= 256, name.trimmingCharacters(in: .whitespaces) == name,
            !name.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
        else {
            throw ServerError.badUserName()
        }
    }

    /// The user a token names, as long as it was signed for their current password.
    public func current(_ claims: TokenClaims) throws -> User {
        let row = try db.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(User.columns) FROM user WHERE id = ?", arguments: [claims.sub.value])
        }
        guard let row else { throw ServerError.userGone() }
        guard (claims.generation ?? 0) == row[3] else { throw ServerError.passwordChanged() }
        return User(row: row)
    }

    /// The user an external provider (`jwt`) vouches for, added at first sight; their admin
    /// flag follows what the provider says each time. A password user of that name keeps it:
    /// the provider cannot take over their account.
    public func externalUser(_ name: String, isAdmin: Bool, provider: String) throws -> User {
        try Self.check(name: name)
        return try db.write { db in
            if let row = try Row.fetchOne(db, sql: "SELECT \(User.columns) FROM user WHERE name = ?", arguments: [name])
            {
                var user = User(row: row)
                guard user.provider == provider else { throw ServerError.nameTaken(name, by: user.provider) }
                // Names compare without case; an external identity is exactly its id (two ids that
                // differ in case are two people, and the second is refused, never merged).
                guard Array(user.name.utf8) == Array(name.utf8) else { throw ServerError.nameTakenInAnotherCase(name) }
                if user.isAdmin != isAdmin {
                    try db.execute(sql: "UPDATE user SET is_admin = ? WHERE id = ?", arguments: [isAdmin, user.id])
                    user.isAdmin = isAdmin
                }
                return user
            }
            let user = User(id: Self.newId(), name: name, isAdmin: isAdmin, provider: provider)
            try db.execute(
                sql: """
                    INSERT INTO user (id, name, password_hash, is_admin, created, provider) VALUES (?, ?, '', ?, ?, ?)
                    """,
                arguments: [user.id, name, isAdmin, Timestamp(Date()).iso8601, provider])
            return user
        }
    }

    static func newId() -> String { UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }
}

extension User {
    /// The columns ``init(row:)`` reads.
    static let columns = "id, name, is_admin, generation, provider"

    /// A user from a row of ``columns``.
    init(row: Row) { self.init(id: row[0], name: row[1], isAdmin: row[2], generation: row[3], provider: row[4]) }
}
