import Foundation
import RealmAdapter

/// Ending tokens before they expire: a user logging out (`POST /auth/revoke`), and the named,
/// non-expiring admin tokens of backends (`realm-adapter user admin-token`).
extension UserDirectory {
    /// Ends the login `claims` belong to (a refresh token, with every access token made from it),
    /// or one access token; an admin token is removed. The directory keeps a revoked id only until
    /// the token would have expired anyway.
    public func revoke(_ claims: TokenClaims, now: Date = Date()) throws {
        try db.write { db in
            if claims.kind == "admin" {
                try db.execute(sql: "DELETE FROM admin_token WHERE id = ?", arguments: [claims.jti])
                return
            }
            guard let id = claims.jti else { throw ServerError.tokenWithoutId() }
            let seconds = Int64(now.timeIntervalSince1970)
            try db.execute(sql: "DELETE FROM revoked_token WHERE expires < ?", arguments: [seconds])
            try db.execute(
                sql: "INSERT INTO revoked_token (id, expires) VALUES (?, ?) ON CONFLICT DO NOTHING",
                arguments: [id, Int64(claims.exp.value.timeIntervalSince1970)])
        }
    }

    /// Whether the token, or the login it was made from, was revoked.
    static func isRevoked(_ db: any StoreConnection, _ claims: TokenClaims) throws -> Bool {
        guard claims.jti != nil || claims.rid != nil else { return false }
        return try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM revoked_token WHERE id IN (?, ?))",
            arguments: [claims.jti, claims.rid]) ?? false
    }

    /// An admin token: its name and when it was made.
    public struct AdminToken: Sendable, Hashable {
        public var name: String
        public var created: String
    }

    /// Records a new admin token named `name` (new) and returns its id, which the token carries.
    public func addAdminToken(name: String) throws -> String {
        try Self.check(name: name)
        let id = Self.newId()
        try db.write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM admin_token WHERE name = ?", arguments: [name]) == nil else {
                throw ServerError.adminTokenExists(name)
            }
            try db.execute(
                sql: "INSERT INTO admin_token (name, id, created) VALUES (?, ?, ?)",
                arguments: [name, id, Timestamp(Date()).iso8601])
        }
        return id
    }

    /// The admin tokens, by name.
    public func adminTokens() throws -> [AdminToken] {
        try db.read { db in
            try StoreRow.fetchAll(db, sql: "SELECT name, created FROM admin_token ORDER BY name").map {
                AdminToken(name: $0[0], created: $0[1])
            }
        }
    }

    /// Ends the admin token named `name`; false if there is none.
    public func removeAdminToken(name: String) throws -> Bool {
        try db.write { db in
            try db.execute(sql: "DELETE FROM admin_token WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
    }

    /// The admin an admin token (its id) stands for, while its row exists.
    func adminTokenUser(id: String?) throws -> User {
        let name = try db.read { db in
            try String.fetchOne(db, sql: "SELECT name FROM admin_token WHERE id = ?", arguments: [id])
        }
        guard let name else { throw ServerError.adminTokenRevoked() }
        return Self.adminTokenUser(named: name)
    }

    static func adminTokenUser(named name: String) -> User {
        User(id: User.adminTokenPrefix + name, name: name, isAdmin: true, provider: User.adminTokenProvider)
    }

    /// A user by id, or the admin of an admin token that still exists.
    func userOrAdminToken(id: String) throws -> User? {
        guard id.hasPrefix(User.adminTokenPrefix) else { return try user(id: id) }
        let name = String(id.dropFirst(User.adminTokenPrefix.count))
        let exists = try db.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM admin_token WHERE name = ?)", arguments: [name])
        }
        return exists == true ? Self.adminTokenUser(named: name) : nil
    }
}
