/// Reads one JSON object member by member, for hand-written decoders that must name the JSON
/// path of every mistake and reject members nobody asked for (a misspelt option is an error,
/// never silently ignored).
///
/// ```swift
/// var r = try JSONObjectReader(json, path: "database", code: .invalidConfiguration)
/// let port = try r.int("port") ?? 5432
/// try r.finish()   // throws: "database.prot: unknown key (expected one of: host, port, …)"
/// ```
public struct JSONObjectReader {
    public let path: String
    public let members: [JSONValue.Member]
    let code: RealmAdapterError.Code
    private var read: Set<String> = []

    public init(_ value: JSONValue, path: String, code: RealmAdapterError.Code) throws {
        guard case .object(let members) = value else {
            throw RealmAdapterError(
                code, "\(path.isEmpty ? "The document" : path) must be an object, found \(value.kindName).",
                context: ["json.path": path.isEmpty ? "$" : path])
        }
        self.members = members
        self.path = path
        self.code = code
    }

    /// The JSON path of a member of this object.
    public func path(_ key: String) -> String { Self.join(path, key) }

    static func join(_ base: String, _ key: String) -> String {
        let plain =
            !key.isEmpty
            && key.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }
        if plain { return base.isEmpty ? key : base + "." + key }
        return base + "[\"" + key + "\"]"
    }

    public func error(_ key: String?, _ message: String) -> RealmAdapterError {
        let p = key.map(path) ?? path
        return RealmAdapterError(
            code, "\(p.isEmpty ? "$" : p): \(message)", context: ["json.path": p.isEmpty ? "$" : p])
    }

    /// The raw member, marking it as read. JSON `null` counts as absent.
    public mutating func value(_ key: String) -> JSONValue? {
        read.insert(key)
        guard let v = members.first(where: { $0.key == key })?.value, v != .null else { return nil }
        return v
    }

    public mutating func string(_ key: String) throws -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw error(key, "expected a string, found \(v.kindName).") }
        return s
    }

    public mutating func requiredString(_ key: String) throws -> String {
        guard let s = try string(key) else { throw error(key, "is required (a string).") }
        return s
    }

    public mutating func bool(_ key: String) throws -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw error(key, "expected true or false, found \(v.kindName).") }
        return b
    }

    public mutating func int(_ key: String, in range: ClosedRange<Int64>? = nil) throws -> Int? {
        guard let v = value(key) else { return nil }
        guard case .int(let i) = v else { throw error(key, "expected an integer, found \(v.kindName).") }
        if let range, !range.contains(i) {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), found \(i).")
        }
        return Int(i)
    }

    public mutating func double(_ key: String) throws -> Double? {
        guard let v = value(key) else { return nil }
        guard let d = v.numberValue else { throw error(key, "expected a number, found \(v.kindName).") }
        return d
    }

    public mutating func object(_ key: String) throws -> JSONObjectReader? {
        guard let v = value(key) else { return nil }
        return try JSONObjectReader(v, path: path(key), code: code)
    }

    public mutating func array(_ key: String) throws -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let items) = v else { throw error(key, "expected an array, found \(v.kindName).") }
        return items
    }

    /// A `{ "name": "string" }` map.
    public mutating func stringMap(_ key: String) throws -> [(String, String)] {
        guard var o = try object(key) else { return [] }
        return try o.members.map { m in (m.key, try o.requiredString(m.key)) }
    }

    /// Throws if the object has a member that no accessor read.
    public func finish() throws {
        for m in members where !read.contains(m.key) {
            let known = read.sorted().joined(separator: ", ")
            throw error(m.key, "unknown key" + (known.isEmpty ? "." : " (expected one of: \(known))."))
        }
    }
}
