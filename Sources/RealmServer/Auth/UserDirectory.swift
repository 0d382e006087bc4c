import Foundation
import HummingbirdBcrypt
import RealmAdapter

/// The server's users and the permissions on Realm paths, in `server.sqlite` in the store's
/// directory: `serve` and the `user` and `permission` commands share it, from any process.
/// Passwords are kept as bcrypt hashes (cost 10), never in the clear.
public final class UserDirectory: Sendable {
    let db: any StoreBackend

    /// Opens (and creates) the directory of the store at `storeDirectory`.
    public init(storeDirectory: String) throws {
        // One process at a time (an IMMEDIATE transaction): two opening a directory of an earlier
        // release must not both add the column.
        db = try RealmStore.serverDatabase(in: storeDirectory, create: Self.create)
    }

    /// The directory in a store's own database (a Postgres store's), whose backend has made
    /// its tables.
    package init(backend: any StoreBackend) { db = backend }

    /// The tables, made or brought up to date.
    static func create(_ db: any StoreConnection) throws {
        // `generation` moves on with each new password: refresh tokens of an earlier one stop working.
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS "user" (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE,
                    password_hash TEXT NOT NULL, is_admin INTEGER NOT NULL, created TEXT NOT NULL,
                    generation INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE IF NOT EXISTS permission (path TEXT NOT NULL, user_id TEXT NOT NULL,
                    level INTEGER NOT NULL, PRIMARY KEY (path, user_id)) WITHOUT ROWID;
                """)
        // Added later (a directory made before has only password users, all of them confirmed).
        let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('user')")
        if !columns.contains("provider") {
            try db.execute(sql: "ALTER TABLE \"user\" ADD COLUMN provider TEXT NOT NULL DEFAULT 'password'")
        }
        if !columns.contains("email_confirmed") {
            try db.execute(sql: "ALTER TABLE \"user\" ADD COLUMN email_confirmed INTEGER NOT NULL DEFAULT 1")
        }
        // Tokens ended before they expire (kept until then), admin tokens by name, permission offers
        // (created in milliseconds, expires in seconds) and one-time tokens mailed to users (both by
        // the SHA-256 of the token: never the token).
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS revoked_token (id TEXT PRIMARY KEY, expires INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS admin_token (name TEXT PRIMARY KEY COLLATE NOCASE, id TEXT NOT NULL UNIQUE,
                    created TEXT NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS offer (id TEXT PRIMARY KEY, path TEXT NOT NULL, level INTEGER NOT NULL,
                    creator_id TEXT NOT NULL, created INTEGER NOT NULL, expires INTEGER,
                    invalidated INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS account_token (id TEXT PRIMARY KEY, user_id TEXT NOT NULL,
                    purpose TEXT NOT NULL, created INTEGER NOT NULL, expires INTEGER NOT NULL,
                    used INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
                """)
    }

    static let cost: UInt8 = 10

    /// Adds a user; the name must be new. One who signs up (`confirmed` false) has an address
    /// to confirm, where `server.requireEmailConfirmation` asks for it; an operator's are confirmed.
    @discardableResult
    public func add(name: String, password: String, admin: Bool = false, confirmed: Bool = true) throws -> User {
        try Self.check(name: name, password: password)
        let user = User(id: Self.newId(), name: name, isAdmin: admin, emailConfirmed: confirmed)
        let hash = Bcrypt.hash(password, cost: Self.cost)
        try db.write { db in
            guard
                try Int.fetchOne(db, sql: "SELECT 1 FROM \"user\" WHERE name = ? COLLATE NOCASE", arguments: [name])
                    == nil
            else {
                throw ServerError.userExists(name)
            }
            try db.execute(
                sql: """
                    INSERT INTO "user" (id, name, password_hash, is_admin, created, email_confirmed)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [user.id, name, hash, admin, Timestamp(Date()).iso8601, confirmed])
        }
        return user
    }

    /// The user with `name` if `password` is theirs (bcrypt: deliberately slow).
    public func verify(name: String, password: String) throws -> User? {
        let row = try db.read { db in
            try StoreRow.fetchOne(
                db,
                sql:
                    "SELECT \(User.columns), password_hash FROM \"user\" WHERE name = ? AND provider = 'password'",
                arguments: [name])
        }
        guard let row else {
            // As slow as a wrong password, so that a name's existence does not show in the time.
            _ = Bcrypt.verify(password, hash: Self.decoy)
            return nil
        }
        guard (try? Self.check(name: name, password: password)) != nil, Bcrypt.verify(password, hash: row[6]) else {
            return nil
        }
        return User(row: row)
    }

    static let decoy = Bcrypt.hash("realm-adapter decoy", cost: cost)

    public func user(named name: String) throws -> User? {
        try db.read { db in
            try StoreRow.fetchOne(
                db, sql: "SELECT \(User.columns) FROM \"user\" WHERE name = ?", arguments: [name]
            )
            .map(User.init(row:))
        }
    }

    public func user(id: String) throws -> User? {
        try db.read { db in
            try StoreRow.fetchOne(db, sql: "SELECT \(User.columns) FROM \"user\" WHERE id = ?", arguments: [id])
                .map(User.init(row:))
        }
    }

    /// Every user, by name.
    public func users() throws -> [User] {
        try db.read { db in
            try StoreRow.fetchAll(db, sql: "SELECT \(User.columns) FROM \"user\" ORDER BY name")
                .map(User.init(row:))
        }
    }

    /// Removes a user and the permissions granted to them; false if there was none.
    public func remove(name: String) throws -> Bool {
        try db.write { db in
            guard let id = try String.fetchOne(db, sql: "SELECT id FROM \"user\" WHERE name = ?", arguments: [name])
            else {
                return false
            }
            try db.execute(sql: "DELETE FROM permission WHERE user_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM \"user\" WHERE id = ?", arguments: [id])
            return true
        }
    }

    /// Makes the user named `name` an admin, or no longer one; their tokens follow at once (each
    /// request reads the flag from the directory).
    public func setAdmin(name: String, _ admin: Bool) throws {
        try db.write { db in
            try db.execute(sql: "UPDATE \"user\" SET is_admin = ? WHERE name = ?", arguments: [admin, name])
            guard db.changesCount == 1 else { throw ServerError.noSuchUser(name) }
        }
    }

    public func setPassword(name: String, password: String) throws {
        guard let user = try user(named: name) else { throw ServerError.noSuchUser(name) }
        try setPassword(of: user, password: password)
    }

    /// A new password for `user` (of provider password): every token issued before it ends.
    public func setPassword(of user: User, password: String) throws {
        try Self.check(name: user.name, password: password)
        guard user.provider == "password" else { throw ServerError.noPassword(user) }
        let hash = Bcrypt.hash(password, cost: Self.cost)
        try db.write { db in
            try db.execute(
                sql: "UPDATE \"user\" SET password_hash = ?, generation = generation + 1 WHERE id = ?",
                arguments: [hash, user.id])
            guard db.changesCount == 1 else { throw ServerError.userGone() }
            try Self.spendResetTokens(db, of: user.id)
        }
    }

    static func check(name: String, password: String) throws {
        try check(name: name)
        try check(password: password)
    }

    static func check(password: String) throws {
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

    /// The user a token names, as long as it was signed for their current password and was not
    /// revoked (nor the login it was made from); an admin token's admin, while it exists.
    public func current(_ claims: TokenClaims) throws -> User {
        if claims.kind == "admin" { return try adminTokenUser(id: claims.jti) }
        // An access token made from an admin token lasts as long as that token.
        if claims.sub.value.hasPrefix(User.adminTokenPrefix) { return try adminTokenUser(id: claims.rid) }
        let (row, revoked) = try db.read { db in
            (
                try StoreRow.fetchOne(
                    db, sql: "SELECT \(User.columns) FROM \"user\" WHERE id = ?", arguments: [claims.sub.value]),
                try Self.isRevoked(db, claims)
            )
        }
        guard let row else { throw ServerError.userGone() }
        guard (claims.generation ?? 0) == row[3] else { throw ServerError.passwordChanged() }
        guard !revoked else { throw ServerError.tokenRevoked() }
        return User(row: row)
    }

    /// The user an external provider (`jwt`) vouches for, added at first sight; their admin
    /// flag follows what the provider says each time. A password user of that name keeps it:
    /// the provider cannot take over their account.
    public func externalUser(_ name: String, isAdmin: Bool, provider: String) throws -> User {
        try Self.check(name: name)
        return try db.write { db in
            if let row = try StoreRow.fetchOne(
                db, sql: "SELECT \(User.columns) FROM \"user\" WHERE name = ?", arguments: [name])
            {
                var user = User(row: row)
                guard user.provider == provider else { throw ServerError.nameTaken(name, by: user.provider) }
                // Names compare without case; an external identity is exactly its id (two ids that
                // differ in case are two people, and the second is refused, never merged).
                guard Array(user.name.utf8) == Array(name.utf8) else { throw ServerError.nameTakenInAnotherCase(name) }
                if user.isAdmin != isAdmin {
                    try db.execute(sql: "UPDATE \"user\" SET is_admin = ? WHERE id = ?", arguments: [isAdmin, user.id])
                    user.isAdmin = isAdmin
                }
                return user
            }
            let user = User(id: Self.newId(), name: name, isAdmin: isAdmin, provider: provider)
            try db.execute(
                sql: """
                    INSERT INTO "user" (id, name, password_hash, is_admin, created, provider) VALUES (?, ?, '', ?, ?, ?)
                    """,
                arguments: [user.id, name, isAdmin, Timestamp(Date()).iso8601, provider])
            return user
        }
    }

    /// A new user of provider anonymous: each login is another user, who owns `/~/` and nothing else.
    public func anonymousUser() throws -> User {
        let id = Self.newId()
        let user = User(id: id, name: "anonymous-" + id, isAdmin: false, provider: "anonymous")
        try db.write { db in
            try db.execute(
                sql: """
                    INSERT INTO "user" (id, name, password_hash, is_admin, created, provider)
                    VALUES (?, ?, '', 0, ?, ?)
                    """,
                arguments: [id, user.name, Timestamp(Date()).iso8601, user.provider])
        }
        return user
    }

    static func newId() -> String { UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }
}

extension User {
    /// The columns ``init(row:)`` reads.
    static let columns = "id, name, is_admin, generation, provider, email_confirmed"

    /// A user from a row of ``columns``.
    init(row: StoreRow) {
        self.init(
            id: row[0], name: row[1], isAdmin: row[2], generation: row[3], provider: row[4], emailConfirmed: row[5])
    }
}
