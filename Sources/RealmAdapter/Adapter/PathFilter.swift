import Foundation

/// A Realm path filter: a regular expression matched anywhere in the path unless anchored
/// (`^/(.*?)/myRealm$`), as the legacy `realmRegex` was.
package struct PathFilter: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: NSRegularExpression is immutable after creation and documented as safe to
    // use from several threads at once.
    private let regex: NSRegularExpression
    /// The pattern as literal text and `[^/]+` segments, when it is only that (as the regex a
    /// path template derives is): matched byte by byte, with no regex engine per path.
    private let pieces: [Piece]?
    public let pattern: String

    enum Piece {
        case literal([UInt8])
        case segment
    }

    /// - Throws: `invalidConfiguration` naming the pattern if it does not compile.
    public init(_ pattern: String) throws {
        do {
            regex = try NSRegularExpression(pattern: pattern)
        } catch {
            throw RealmAdapterError.invalidPathRegex(pattern)
        }
        self.pattern = pattern
        pieces = Self.pieces(of: pattern)
    }

    public func matches(_ path: String) -> Bool {
        // ASCII text without control characters: `$` cannot meet a line break, where the regex
        // engine would also match before one.
        if let pieces, path.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x80 }) {
            return Self.matches(Array(path.utf8)[...], pieces[...])
        }
        return regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil
    }

    /// `^…$` made of escaped or plain characters and `[^/]+`, as pieces; nil for anything else.
    static func pieces(of pattern: String) -> [Piece]? {
        var rest = Substring(pattern)
        guard rest.hasPrefix("^"), rest.hasSuffix("$"), !rest.hasSuffix("\\$") else { return nil }
        rest = rest.dropFirst().dropLast()
        let special = "\\^$.|?*+()[]{}"
        var pieces: [Piece] = []
        func append(_ c: Character) {
            if case .literal(let bytes)? = pieces.last {
                pieces[pieces.count - 1] = .literal(bytes + Array(String(c).utf8))
            } else {
                pieces.append(.literal(Array(String(c).utf8)))
            }
        }
        while let c = rest.first {
            if rest.hasPrefix("[^/]+") {
                pieces.append(.segment)
                rest = rest.dropFirst(5)
            } else if c == "\\", let next = rest.dropFirst().first, special.contains(next) {
                append(next)
                rest = rest.dropFirst(2)
            } else if !special.contains(c), c.isASCII, let a = c.asciiValue, a >= 0x20, a < 0x7F {
                append(c)
                rest = rest.dropFirst()
            } else {
                return nil
            }
        }
        return pieces
    }

    /// Whether `path` is exactly `pieces` (a segment: one or more bytes other than '/').
    private static func matches(_ path: ArraySlice<UInt8>, _ pieces: ArraySlice<Piece>) -> Bool {
        guard let first = pieces.first else { return path.isEmpty }
        switch first {
        case .literal(let bytes):
            return path.starts(with: bytes) && matches(path.dropFirst(bytes.count), pieces.dropFirst())
        case .segment:
            var end = path.startIndex
            while end < path.endIndex, path[end] != UInt8(ascii: "/") {
                end += 1
                if matches(path[end...], pieces.dropFirst()) { return true }
            }
            return false
        }
    }

    public var description: String { pattern }
}
