import RealmAdapter

/// A level granted on a path: to one user, or to everyone (`userId` nil) as the path's default.
public struct Permission: Sendable, Hashable {
    public var path: String
    public var userId: String?
    public var level: AccessLevel
}

extension UserDirectory {
    /// What `user` may do with the Realm at `path` (resolved: no `/~/`). Admins manage every
    /// Realm and users their own directory (`/<id>/…`); elsewhere the higher of the path's
    /// default and what was granted to the user.
    public func level(of user: User, at path: String) throws -> AccessLevel {
        if user.isAdmin || user.owns(path) { return .manage }
        return try db.read { db in
            let level = try Int.fetchOne(
                db, sql: "SELECT max(level) FROM permission WHERE path = ? AND user_id IN (?, '*')",
                arguments: [path, user.id])
            return level.flatMap(AccessLevel.init(rawValue:)) ?? AccessLevel.none
        }
    }

    /// Grants `level` on `path` to the user with id `userId`, or to everyone when nil
    /// (`.none` takes a grant back).
    public func grant(_ level: AccessLevel, on path: String, to userId: String?) throws {
        try RealmPath.validate(path)
        try db.write { db in
            if level == .none {
                try db.execute(
                    sql: "DELETE FROM permission WHERE path = ? AND user_id = ?", arguments: [path, userId ?? "*"])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO permission (path, user_id, level) VALUES (?, ?, ?)
                        ON CONFLICT (path, user_id) DO UPDATE SET level = excluded.level
                        """,
                    arguments: [path, userId ?? "*", level.rawValue])
            }
        }
    }

    /// The grants, on one path or on all, by path.
    public func permissions(on path: String? = nil) throws -> [Permission] {
        try db.read { db in
            let rows =
                if let path {
                    try StoreRow.fetchAll(
                        db, sql: "SELECT path, user_id, level FROM permission WHERE path = ? ORDER BY user_id",
                        arguments: [path])
                } else {
                    try StoreRow.fetchAll(db, sql: "SELECT path, user_id, level FROM permission ORDER BY path, user_id")
                }
            return rows.map { r in
                let user: String = r[1]
                return Permission(
                    path: r[0], userId: user == "*" ? nil : user, level: AccessLevel(rawValue: r[2]) ?? .none)
            }
        }
    }
}
