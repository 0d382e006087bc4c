/// What a user may do with a Realm (legacy 3.x path permissions): each level includes the ones
/// before it.
public enum AccessLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case none = 0
    /// Queries and subscriptions (legacy `download`).
    case read
    /// Mutations too (legacy `upload`).
    case write
    /// Granting others up to this level (legacy `manage`).
    case manage

    public static func < (a: AccessLevel, b: AccessLevel) -> Bool { a.rawValue < b.rawValue }

    public var description: String { ["none", "read", "write", "manage"][rawValue] }

    /// A level by name; the legacy clients' `admin` is `manage`.
    public init?(name: String) {
        let name = name.lowercased() == "admin" ? "manage" : name.lowercased()
        guard let level = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = level
    }

    /// The legacy clients' name of the level (`admin` for manage).
    public var legacyName: String { self == .manage ? "admin" : description }

    /// The legacy names of what the level allows, as access tokens list them.
    public var legacyAccess: [String] { Array(["download", "upload", "manage"].prefix(rawValue)) }
}
