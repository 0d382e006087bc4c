import Foundation
import Hummingbird
import RealmAdapter

/// `POST /realms/<path> {"schema": [ADD_TYPE, ADD_PROPERTIES, …]}`: a user creates a Realm by
/// giving its schema, as opening a new synced Realm did, or adds to the schema of one they
/// manage. Users create Realms under their own path (`/~/…`), admins anywhere; the schema
/// instructions are the JSON `realm apply` reads, and changes are additive only, as the store
/// allows. One Realm transaction, with the user as its origin.
struct RealmsEndpoint: Sendable {
    let server: RealmHTTPServer

    func create(_ request: Request, segments: [String], _ body: Data) async throws -> Response {
        let json = try AccountEndpoint.object(
            body, "POST /realms/<path> takes a JSON object: schema, an array of ADD_TYPE and ADD_PROPERTIES.")
        guard case .array(let items)? = json["schema"] else {
            throw ServerError.badRequest("schema is required: an array of ADD_TYPE and ADD_PROPERTIES instructions.")
        }
        var instructions: [Instruction] = []
        for (i, item) in items.enumerated() {
            let instruction = try Instruction(json: item, path: "schema[\(i)]")
            guard instruction.isSchemaChange else {
                throw ServerError.badRequest(
                    "schema[\(i)]: only ADD_TYPE and ADD_PROPERTIES make a schema; objects go through GraphQL.")
            }
            instructions.append(instruction)
        }
        let (user, path) = try await manager(request, segments)
        let existed = try server.store.contains(path)
        let version = try await server.store.apply(
            instructions, to: path, origin: user.map { "user:\($0.id)" } ?? "graphql")
        return AuthEndpoint.json([
            .init("path", .string(path)), .init("version", .int(version)), .init("created", .bool(!existed)),
        ])
    }

    /// The caller and the path (`/~/` resolved); the caller must manage it (a new Realm: be its
    /// owner or an admin).
    func manager(_ request: Request, _ segments: [String]) async throws -> (User?, String) {
        guard let tokens = server.tokens else { return (nil, try RealmHTTPServer.path(segments)) }
        let (user, claims) = try await tokens.caller(request.headers[.authorization], in: server.users)
        let path = user.resolve(try RealmHTTPServer.path(segments))
        if claims.kind == "access", claims.path != path {
            throw ServerError.tokenForOtherPath(claims.path ?? "?", path)
        }
        let have = try server.users.level(of: user, at: path)
        guard have == .manage else {
            if try !server.store.contains(path) { throw ServerError.cannotCreate(path) }
            throw ServerError.forbidden(path, need: .manage, have: have)
        }
        return (user, path)
    }
}
