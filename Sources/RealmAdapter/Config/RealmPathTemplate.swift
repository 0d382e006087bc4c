/// The `realm.path` of a configuration: a literal path (`/SQLDemo`) or a template over a
/// row's columns (`/{userID}/myRealm`) that routes each row to its Realm. In the other
/// direction the template's fields are read back out of a Realm path as column values.
public struct RealmPathTemplate: Hashable, Sendable, CustomStringConvertible {
    enum Part: Hashable, Sendable {
        case literal(String)
        case field(String)
    }
    let parts: [Part]
    public let template: String

    /// - Throws: `invalidConfiguration` for unbalanced braces, empty or adjacent fields, or a
    ///   literal path that is not a valid Realm path.
    public init(_ template: String) throws {
        func fail(_ why: String) -> RealmAdapterError {
            RealmAdapterError(
                .invalidConfiguration,
                "realm.path: '\(template)' is not a valid path template: \(why). Use a path such as /SQLDemo "
                    + "or /{userID}/myRealm.",
                context: ["json.path": "realm.path"])
        }
        var parts: [Part] = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            guard let close = rest[open...].firstIndex(of: "}") else { throw fail("a '{' is not closed") }
            let name = String(rest[rest.index(after: open)..<close])
            guard !name.isEmpty, !name.contains("{"), !name.contains("/") else {
                throw fail("a field name is empty or malformed")
            }
            if case .field? = parts.last { throw fail("two fields must be separated by text") }
            parts.append(.field(name))
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("}") { throw fail("a '}' has no matching '{'") }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        self.parts = parts
        self.template = template
        fields = parts.compactMap { if case .field(let f) = $0 { f } else { nil } }
        // Check the shape with every field filled in.
        do { try RealmPath.validate(render { _ in "x" }!) } catch let e as RealmAdapterError { throw fail(e.message) }
    }

    /// The column names the template reads, in order.
    public let fields: [String]

    /// Whether the template is a single literal path.
    public var isLiteral: Bool { fields.isEmpty }

    /// The path for a row, or nil if a field has no value. Values must not contain '/'.
    public func render(_ value: (String) -> String?) -> String? {
        var out = ""
        out.reserveCapacity(template.utf8.count + 16)
        for p in parts {
            switch p {
            case .literal(let s): out += s
            case .field(let f):
                guard let v = value(f), !v.isEmpty, !v.utf8.contains(UInt8(ascii: "/")) else { return nil }
                out += v
            }
        }
        return out
    }

    /// The field values encoded in `path`, or nil if the path does not fit the template.
    /// Byte by byte: a hand-off matches every Realm of the store against the template.
    public func extract(_ path: String) -> [String: String]? {
        var values: [String: String] = [:]
        var rest = Substring(path).utf8
        for (k, p) in parts.enumerated() {
            switch p {
            case .literal(let s):
                guard rest.starts(with: s.utf8) else { return nil }
                rest = rest.dropFirst(s.utf8.count)
            case .field(let f):
                // A field runs to the next literal (or the end), within one path segment.
                var end = rest.endIndex
                if k + 1 < parts.count, case .literal(let next) = parts[k + 1] {
                    guard let found = Self.firstIndex(of: next.utf8, in: rest) else { return nil }
                    end = found
                }
                let v = rest[..<end]
                guard !v.isEmpty, !v.contains(UInt8(ascii: "/")) else { return nil }
                values[f] = String(Substring(v))
                rest = rest[end...]
            }
        }
        return rest.isEmpty ? values : nil
    }

    private static func firstIndex(
        of needle: String.UTF8View,
        in haystack: Substring.UTF8View
    ) -> Substring.UTF8View.Index? {
        guard let first = needle.first else { return haystack.startIndex }
        var from = haystack.startIndex
        while let i = haystack[from...].firstIndex(of: first) {
            if haystack[i...].starts(with: needle) { return i }
            from = haystack.index(after: i)
        }
        return nil
    }

    /// A regular expression matching exactly the paths this template produces.
    public var defaultRegex: String {
        "^"
            + parts.map { p -> String in
                switch p {
                case .literal(let s): s.map { "\\^$.|?*+()[]{}".contains($0) ? "\\\($0)" : String($0) }.joined()
                case .field: "[^/]+"
                }
            }.joined() + "$"
    }

    public var description: String { template }
}
