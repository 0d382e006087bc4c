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

    /// `path` with a leading `/~/` read as this user's own directory.
    public func resolve(_ path: String) -> String {
        path == "/~" ? "/\(id)" : path.hasPrefix("/~/") ? "/\(id)/" + path.dropFirst(3) : path
    }

    /// Whether `path` (resolved) is under the user's own directory.
    public func owns(_ path: String) -> Bool { path.hasPrefix("/\(id)/") }
}
