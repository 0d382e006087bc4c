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
    let permissions: PermissionsEndpoint

    func create(_ request: Request, segments: [String], _ body: Data) async throws -> Response {
        let (user, path) = try await manager(request, segments)
        let json = try RealmHTTPServer.object(
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
        let (version, changed) = try await Self.apply(
            instructions, to: path, by: user, origin: user.map { "user:\($0.id)" } ?? "graphql", in: server.store)
        // A Realm's first transaction is its version 1: whoever commits it created the Realm (of two
        // requests that race to create one, only one says so).
        return Self.answer(path, version: version, created: changed && version == 1, changed: changed)
    }

    /// Applies schema instructions to the Realm at `path` (creating it) as one transaction of
    /// `origin`, with the checks of a schema change: the Realm's fine-grained permissions
    /// (modifySchema), the system types left as they are, and the permission metadata added with
    /// a first ACL. A schema the Realm has already commits nothing. The Realm's version, and
    /// whether anything was committed. The caller checked that `user` manages the path.
    static func apply(
        _ instructions: [Instruction], to path: String, by user: User?, origin: String, in store: RealmStore
    )
        async throws -> (version: Int64, changed: Bool)
    {
        let existing = try store.contains(path) ? try store.schema(of: path) : nil
        // A client that gives the schema it has at every launch (as opening a synced Realm did)
        // commits nothing when the Realm has it already.
        if let existing, (try? Self.schema(existing, after: instructions)) == existing {
            return (try store.version(of: path), false)
        }
        if let existing, existing.hasPermissions {
            let access = try Viewer(user).access(to: path, in: store, schema: existing)
            try Self.checkSchemaChange(instructions, existing, access)
        }
        // The system types are the server's: a schema may name them as they are (legacy clients
        // gave them with their own), not change them.
        for (i, instruction) in instructions.enumerated() where PermissionTypes.isSystemType(instruction.objectType) {
            if case .addType(let t) = instruction, PermissionTypes.types.contains(t) { continue }
            throw ServerError.badRequest(
                "schema[\(i)]: \(instruction.objectType) is a system type (fine-grained permissions): it cannot change."
            )
        }
        // A type with an ACL (a list of __Permission) needs the metadata types: a Realm without
        // them gets them in the same transaction, everyone keeping every privilege.
        let acl = instructions.contains { i in
            switch i {
            case .addType(let t):
                PermissionTypes.isSystemType(t.name)
                    || t.properties.contains { $0.type.linkTarget == PermissionTypes.permission }
            case .addProperties(_, let ps): ps.contains { $0.type.linkTarget == PermissionTypes.permission }
            default: false
            }
        }
        let version = try await store.perform {
            try store.write(to: path, origin: origin) { tx in
                if acl { try tx.enablePermissions() }
                try tx.apply(instructions)
            }.version
        }
        return (version, true)
    }

    /// `schema` with the schema instructions applied, as the store would (additive, checked).
    static func schema(_ schema: Schema, after instructions: [Instruction]) throws -> Schema {
        var result = schema
        for instruction in instructions {
            switch instruction {
            case .addType(let type): result = try result.adding(type)
            case .addProperties(let name, let properties): result = try result.adding(properties: properties, to: name)
            default: break
            }
        }
        return result
    }

    /// Refuses a change the Realm's fine-grained permissions do not allow: a new type needs
    /// modifySchema at the Realm level, new properties modifySchema on their type.
    static func checkSchemaChange(_ instructions: [Instruction], _ schema: Schema, _ access: RealmAccess) throws {
        for instruction in instructions {
            let (target, have): (PermissionTarget, Privileges)
            switch instruction {
            case .addType(let t) where schema[type: t.name] == nil: (target, have) = (.realm, access.realm)
            case .addType(let t):
                if (try? schema.adding(t)) == schema { continue }
                (target, have) = (.type(t.name), access.privileges(ofType: t.name))
            case .addProperties(let t, _): (target, have) = (.type(t), access.privileges(ofType: t))
            default: continue
            }
            guard have.contains(.modifySchema) else {
                let e = RealmAdapterError.permissionDenied("changing the schema of", target, missing: .modifySchema)
                throw ServerError(403, e.message)
            }
        }
    }

    static func answer(_ path: String, version: Int64, created: Bool, changed: Bool) -> Response {
        AuthEndpoint.json([
            .init("path", .string(path)), .init("version", .int(version)), .init("created", .bool(created)),
            .init("changed", .bool(changed)),
        ])
    }

    /// The caller and the path (`/~/` resolved); the caller must manage it (a new Realm: be its
    /// owner or an admin).
    func manager(_ request: Request, _ segments: [String]) async throws -> (User?, String) {
        let asked = try RealmHTTPServer.path(segments)
        guard server.tokens != nil else { return (nil, asked) }
        let (user, path, have) = try await permissions.access(request.headers[.authorization], asked)
        guard have == .manage else {
            if try !server.store.contains(path) { throw ServerError.cannotCreate(path) }
            throw ServerError.forbidden(path, need: .manage, have: have)
        }
        return (user, path)
    }
}
