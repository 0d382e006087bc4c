import Foundation
import Hummingbird
import RealmAdapter

/// Permission offers, in the legacy routes (a manager shares a Realm with whoever gets a token):
/// - `POST /permissions/offers {"realmPath", "accessLevel": "read"|"write"|"admin", "expiresAt"?}`
///   answers `{"token", …}`; the caller must manage the path at that level;
/// - `GET /permissions/offers`: the caller's offers (by id, the token's SHA-256: never the token);
/// - `POST /permissions/offers/<token>/accept`: the caller gets the offered level (offers only add);
/// - `DELETE /permissions/offers/<token or id>`: the creator withdraws it.
struct OffersEndpoint: Sendable {
    let users: UserDirectory
    let tokens: Tokens
    let permissions: PermissionsEndpoint

    func create(_ header: String?, _ body: Data) async throws -> Response {
        let json = try RealmHTTPServer.object(
            body, "POST /permissions/offers takes a JSON object: realmPath, accessLevel, and expiresAt (or none).")
        guard case .string(let asked)? = json["realmPath"], case .string(let name)? = json["accessLevel"],
            let level = AccessLevel(name: name), level > .none
        else {
            throw ServerError.badRequest("realmPath and accessLevel (read, write or admin) are required.")
        }
        var expires: Date?
        switch json["expiresAt"] {
        case nil, .null?: break
        case .string(let text)?:
            guard let t = Timestamp(iso8601: text) else {
                throw ServerError.badRequest("expiresAt '\(text)' is not an ISO 8601 time (2026-12-31T23:59:59Z).")
            }
            expires = t.date
        default: throw ServerError.badRequest("expiresAt is an ISO 8601 time (2026-12-31T23:59:59Z), or null.")
        }
        let (user, path, have) = try await permissions.manager(header, Self.path(asked))
        guard level <= have else { throw ServerError.forbidden(path, need: level, have: have) }
        let (token, offer) = try users.addOffer(path: path, level: level, creatorId: user.id, expires: expires)
        return AuthEndpoint.json([.init("token", .string(token))] + Self.members(offer))
    }

    func list(_ header: String?) async throws -> Response {
        let (user, _) = try await tokens.caller(header, in: users)
        let offers = try users.offers(by: user.id).map { JSONValue.object(Self.members($0)) }
        return AuthEndpoint.json([.init("offers", .array(offers))])
    }

    func accept(_ header: String?, _ token: String) async throws -> Response {
        let (user, claims) = try await tokens.caller(header, in: users)
        guard claims.isLogin else { throw ServerError.wrongToken("a refresh token (a login), not an access token") }
        let offer = try users.acceptOffer(token, by: user)
        return AuthEndpoint.json([
            .init("path", .string(offer.path)), .init("accessLevel", .string(offer.level.legacyName)),
        ])
    }

    func invalidate(_ header: String?, _ tokenOrId: String) async throws -> Response {
        let (user, _) = try await tokens.caller(header, in: users)
        let offer = try users.invalidateOffer(tokenOrId, by: user.isAdmin ? nil : user.id)
        return AuthEndpoint.json([.init("path", .string(offer.path)), .init("invalidated", .bool(true))])
    }

    /// A legacy Realm URL (`realms://host/~/notes`) or a path.
    static func path(_ asked: String) -> String {
        guard asked.contains("://"), let url = URL(string: asked) else { return asked }
        return url.path.isEmpty ? asked : url.path.removingPercentEncoding ?? url.path
    }

    static func members(_ offer: PermissionOffer) -> [JSONValue.Member] {
        [
            .init("id", .string(offer.id)), .init("path", .string(offer.path)),
            .init("accessLevel", .string(offer.level.legacyName)),
            .init("createdAt", .string(Timestamp(offer.created).iso8601)),
            .init("expiresAt", offer.expires.map { .string(Timestamp($0).iso8601) } ?? .null),
            .init("invalidated", .bool(offer.invalidated)),
        ]
    }
}
