import Foundation

/// A Realm path filter: a regular expression matched anywhere in the path unless anchored
/// (`^/(.*?)/myRealm$`), as the legacy `realmRegex` was.
package struct PathFilter: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: NSRegularExpression is immutable after creation and documented as safe to
    // use from several threads at once.
    private let regex: NSRegularExpression
    public let pattern: String

    /// - Throws: `invalidConfiguration` naming the pattern if it does not compile.
    public init(_ pattern: String) throws {
        do {
            regex = try NSRegularExpression(pattern: pattern)
        } catch {
            throw RealmAdapterError.invalidPathRegex(pattern)
        }
        self.pattern = pattern
    }

    public func matches(_ path: String) -> Bool {
        regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil
    }

    public var description: String { pattern }
}
