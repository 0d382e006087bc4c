import Foundation
import RealmAdapter

/// A permission offer: a manager of a path offers a level on it to whoever they give its token.
public struct PermissionOffer: Sendable, Hashable {
    /// The SHA-256 of the token's text, in hexadecimal: names the offer in listings without giving
    /// it away.
    public var id: String
    public var path: String
    public var level: AccessLevel
    /// The user who made it, or ``UserDirectory/operatorCreator`` for the CLI.
    public var creatorId: String
    public var created: Date
    public var expires: Date?
    public var invalidated: Bool
}

extension UserDirectory {
    /// The creator of offers made with `realm-adapter permission offer create`.
    public static let operatorCreator = "operator"

    /// Records an offer of `level` on `path` by `creatorId`, good until `expires` (or for ever);
    /// returns its token, which only the caller sees (the directory keeps its SHA-256).
    public func addOffer(
        path: String, level: AccessLevel, creatorId: String, expires: Date?, now: Date = Date()
    ) throws -> (token: String, offer: PermissionOffer) {
        try RealmPath.validate(path)
        guard path != "/~", !path.hasPrefix("/~/") else {
            throw ServerError.badRequest("/~/ is each user's own directory: an offer names a Realm by its path.")
        }
        guard level > .none else { throw ServerError.badRequest("An offer grants read, write or admin (manage).") }
        if let expires, expires <= now { throw ServerError.badRequest("expiresAt is in the past.") }
        let token = Self.secretToken()
        let millis = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let offer = PermissionOffer(
            id: Self.digest(token), path: path, level: level, creatorId: creatorId,
            created: Date(timeIntervalSince1970: Double(millis) / 1000), expires: expires, invalidated: false)
        try db.write { db in
            try db.execute(
                sql: "INSERT INTO offer (id, path, level, creator_id, created, expires) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    offer.id, path, level.rawValue, creatorId, millis,
                    expires.map { Int64($0.timeIntervalSince1970) },
                ])
        }
        return (token, offer)
    }

    /// The offers `creatorId` made (all of them for nil), newest first.
    public func offers(by creatorId: String?) throws -> [PermissionOffer] {
        try db.read { db in
            if let creatorId {
                try Self.offers(db, where: "creator_id = ?", [creatorId])
            } else {
                try Self.offers(db, where: db.dialect.literal(true), [])
            }
        }
    }

    /// The offer a token (or an offer's id) names.
    func offer(_ tokenOrId: String) throws -> PermissionOffer? {
        try db.read { db in try Self.offers(db, where: "id IN (?, ?)", [tokenOrId, Self.digest(tokenOrId)]).first }
    }

    static func offers(_ db: any StoreConnection, where condition: String, _ arguments: StoreArguments) throws
        -> [PermissionOffer]
    {
        let sql = """
            SELECT id, path, level, creator_id, created, expires, invalidated FROM offer WHERE \(condition)
            ORDER BY created DESC, id
            """
        return try StoreRow.fetchAll(db, sql: sql, arguments: arguments).map { r in
            PermissionOffer(
                id: r[0], path: r[1], level: AccessLevel(rawValue: r[2]) ?? .none, creatorId: r[3],
                created: Date(timeIntervalSince1970: Double(r[4] as Int64) / 1000),
                expires: (r[5] as Int64?).map { Date(timeIntervalSince1970: Double($0)) }, invalidated: r[6])
        }
    }

    /// Withdraws an offer, named by its token or its id; only its creator may (any when
    /// `creatorId` is nil: the operator). Who accepted it before keeps what they got.
    @discardableResult
    public func invalidateOffer(_ tokenOrId: String, by creatorId: String?) throws -> PermissionOffer {
        guard var offer = try offer(tokenOrId), creatorId == nil || offer.creatorId == creatorId else {
            throw ServerError.noSuchOffer()
        }
        try db.write { db in
            try db.execute(sql: "UPDATE offer SET invalidated = 1 WHERE id = ?", arguments: [offer.id])
        }
        offer.invalidated = true
        return offer
    }

    /// Accepts an offer for `user`: they get its level on its path, unless they have more there
    /// already (offers only add). Refused once expired or withdrawn, or when its creator no
    /// longer manages the path at that level.
    public func acceptOffer(_ token: String, by user: User, now: Date = Date()) throws -> PermissionOffer {
        guard let offer = try offer(token), offer.id == Self.digest(token) else { throw ServerError.noSuchOffer() }
        guard !offer.invalidated else { throw ServerError.offerWithdrawn() }
        if let expires = offer.expires, expires <= now { throw ServerError.offerExpired(expires) }
        if offer.creatorId != Self.operatorCreator {
            guard let creator = try userOrAdminToken(id: offer.creatorId),
                try level(of: creator, at: offer.path) >= offer.level
            else { throw ServerError.offerCreatorLostAccess(offer.path) }
        }
        try db.write { db in
            try db.execute(
                sql: """
                    INSERT INTO permission (path, user_id, level) VALUES (?, ?, ?)
                    ON CONFLICT (path, user_id) DO UPDATE SET level = \(db.dialect.greatest("permission.level", "excluded.level"))
                    """,
                arguments: [offer.path, user.id, offer.level.rawValue])
        }
        return offer
    }

    /// What `user` may reach: the Realms under their own path (manage) and every path granted to
    /// them or to everyone, each at the higher level; by path.
    public func reachable(by user: User, ownRealms: [String]) throws -> [(path: String, level: AccessLevel)] {
        var levels: [String: AccessLevel] = [:]
        for path in ownRealms where user.owns(path) { levels[path] = .manage }
        let granted = try db.read { db in
            try StoreRow.fetchAll(
                db, sql: "SELECT path, max(level) FROM permission WHERE user_id IN (?, '*') GROUP BY path",
                arguments: [user.id])
        }
        for row in granted {
            let level = AccessLevel(rawValue: row[1]) ?? .none
            levels[row[0]] = max(levels[row[0]] ?? .none, user.isAdmin ? .manage : level)
        }
        return levels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
