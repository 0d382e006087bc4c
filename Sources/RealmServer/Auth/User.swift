import Foundation

/// A user of the server: a name to log in with, and an id that paths use (`/~/x` is `/<id>/x`).
public struct User: Sendable, Hashable {
    /// 32 hexadecimal digits, generated.
    public var id: String
    public var name: String
    /// Admins have every level on every Realm and create Realms anywhere.
    public var isAdmin: Bool
    /// Which password the user is at: tokens carry it, and a new password ends the earlier ones.
    public var generation: Int
    /// How the user logs in: `password`, `jwt` (their app's auth service vouches for them),
    /// `anonymous`, `nickname`, or `admin-token` (a backend's named token).
    public var provider: String
    /// Whether the user confirmed their address (their name), or needs not: users an operator
    /// added and those of other providers have nothing to confirm.
    public var emailConfirmed: Bool

    public init(
        id: String, name: String, isAdmin: Bool, generation: Int = 0, provider: String = "password",
        emailConfirmed: Bool = true
    ) {
        self.id = id
        self.name = name
        self.isAdmin = isAdmin
        self.generation = generation
        self.provider = provider
        self.emailConfirmed = emailConfirmed
    }

    /// `path` with a leading `/~/` read as this user's own directory. An admin token has none:
    /// it names Realms by their paths.
    public func resolve(_ path: String) throws -> String {
        guard path == "/~" || path.hasPrefix("/~/") else { return path }
        guard provider != User.adminTokenProvider else { throw ServerError.noHomeDirectory() }
        return path == "/~" ? "/\(id)" : "/\(id)/" + path.dropFirst(3)
    }

    /// The provider of the admins that admin tokens stand for; their ids start `admin-token.`.
    public static let adminTokenProvider = "admin-token"
    static let adminTokenPrefix = adminTokenProvider + "."

    /// Refuses a login while the user's address waits for confirmation, where the server
    /// requires it (`server.requireEmailConfirmation`).
    public func checkConfirmed(required: Bool) throws {
        if required && !emailConfirmed { throw ServerError.emailNotConfirmed() }
    }

    /// Whether `path` (resolved) is under the user's own directory.
    public func owns(_ path: String) -> Bool { path.hasPrefix("/\(id)/") }
}
