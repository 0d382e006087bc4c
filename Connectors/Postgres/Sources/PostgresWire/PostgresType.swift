import Foundation
import RealmAdapter

/// How Postgres types map to Realm values: the Postgres dialect of the type table.
///
/// Values travel in Postgres's text format (as pgoutput and `COPY` send them); sessions are
/// set to `DateStyle=ISO`, `TimeZone=UTC`, `extra_float_digits=3` and `bytea_output=hex`, so
/// the text is unambiguous and floats are exact.
public struct PostgresType: Hashable, Sendable {
    /// What a value of this type becomes in a Realm.
    public enum Kind: Hashable, Sendable {
        case scalar(ScalarType)
        /// A Postgres array of a scalar type: a Realm list of primitives.
        case array(ScalarType)
    }

    public var oid: UInt32
    public var name: String
    public var kind: Kind

    package init(oid: UInt32, name: String, kind: Kind) {
        (self.oid, self.name, self.kind) = (oid, name, kind)
    }

    /// The built-in types, by OID (`pg_type.oid`), with their names.
    package static let builtins: [UInt32: (String, Kind)] = {
        let scalars: [(UInt32, UInt32, String, ScalarType)] = [
            // oid, array oid, name, Realm type
            (16, 1000, "boolean", .bool),
            (21, 1005, "smallint", .int), (23, 1007, "integer", .int), (20, 1016, "bigint", .int),
            (26, 1028, "oid", .int),
            (700, 1021, "real", .float), (701, 1022, "double precision", .double),
            (1700, 1231, "numeric", .decimal), (790, 791, "money", .string),
            (25, 1009, "text", .string), (1043, 1015, "character varying", .string), (1042, 1014, "character", .string),
            (19, 1003, "name", .string), (18, 1002, "\"char\"", .string), (114, 199, "json", .string),
            (3802, 3807, "jsonb", .string),
            (3614, 3643, "tsvector", .string), (142, 143, "xml", .string), (869, 1041, "inet", .string),
            (650, 651, "cidr", .string),
            (829, 1040, "macaddr", .string), (1186, 1187, "interval", .string),
            (1083, 1183, "time without time zone", .string),
            (1266, 1270, "time with time zone", .string),
            (2950, 2951, "uuid", .uuid), (17, 1001, "bytea", .data),
            (1082, 1182, "date", .date), (1114, 1115, "timestamp without time zone", .date),
            (1184, 1185, "timestamp with time zone", .date),
        ]
        var table: [UInt32: (String, Kind)] = [:]
        for (oid, arrayOID, name, realm) in scalars {
            table[oid] = (name, .scalar(realm))
            table[arrayOID] = (name + "[]", .array(realm))
        }
        return table
    }()

    /// The type for an OID and name (from `pg_type` or a pgoutput Type message), or nil when it
    /// is neither built in nor listed in `customTypes` (enums, domains, composites).
    public static func resolve(oid: UInt32, name: String, customTypes: [String: ScalarType]) -> PostgresType? {
        if let (n, kind) = builtins[oid] { return PostgresType(oid: oid, name: n, kind: kind) }
        if let s = customTypes[name] { return PostgresType(oid: oid, name: name, kind: .scalar(s)) }
        if name.hasPrefix("_"), let s = customTypes[String(name.dropFirst())] {
            return PostgresType(oid: oid, name: name, kind: .array(s))
        }
        return nil
    }

    /// The SQL type `createSchema` uses for a Realm property type.
    public static func sqlType(for s: ScalarType) -> String {
        switch s {
        case .bool: "boolean"
        case .int: "bigint"
        case .float: "real"
        case .double: "double precision"
        case .string: "text"
        case .data: "bytea"
        case .date: "timestamp with time zone"
        case .decimal: "numeric"
        case .uuid: "uuid"
        case .objectId: "text"
        }
    }

    // MARK: Text format

    /// The value of a column in text format.
    /// - Throws: `RealmAdapterError` (`invalidValue`) naming the type, never the value.
    public func decode(_ text: String) throws -> Value {
        switch kind {
        case .scalar(let s): return try Self.decode(text, as: s, typeName: name)
        case .array(let s):
            return .list(
                try Self.parseArray(text, typeName: name).map {
                    try $0.map { try Self.decode($0, as: s, typeName: name) } ?? .null
                })
        }
    }

    static func decode(_ text: String, as s: ScalarType, typeName: String) throws -> Value {
        func fail(_ expected: String) -> RealmAdapterError {
            RealmAdapterError.invalidValue("a \(typeName) value is not valid \(expected)")
        }
        switch s {
        case .bool:
            switch text {
            case "t", "true": return .bool(true)
            case "f", "false": return .bool(false)
            default: throw fail("boolean text")
            }
        case .int:
            guard let i = Int64(text) else { throw fail("integer text") }
            return .int(i)
        case .float:
            guard let f = Float(text) else { throw fail("floating-point text") }
            return .float(f)
        case .double:
            guard let d = Double(text) else { throw fail("floating-point text") }
            return .double(d)
        case .decimal:
            // A NaN or an infinity is a double: a double or float property holds it, a decimal one
            // refuses it (its row is a bad row).
            if let d = Self.nonFinite[text] { return .double(d) }
            guard let d = DecimalNumber(exactly: text) else {
                throw fail(
                    "numeric text of at most \(DecimalNumber.significantDigits) significant digits "
                        + "and \(DecimalNumber.maximumDigitsAroundThePoint) digits either side of the point "
                        + "(NaN and infinities cannot be stored)"
                )
            }
            return .decimal(d)
        case .string: return .string(text)
        case .uuid:
            guard let u = UUID(uuidString: text) else { throw fail("UUID text") }
            return .uuid(u)
        case .objectId:
            guard let o = ObjectId(text) else { throw fail("ObjectId text") }
            return .objectId(o)
        case .data:
            guard text.hasPrefix("\\x"), let d = Data(hex: text.dropFirst(2)) else { throw fail("bytea hex text") }
            return .data(d)
        case .date:
            guard let t = Timestamp(iso8601: text) else {
                throw fail("ISO timestamp text" + (text.contains("infinity") ? " (infinity cannot be stored)" : ""))
            }
            guard t.isStorable else { throw RealmAdapterError.dateOutOfRange("a \(typeName) value") }
            return .date(t)
        }
    }

    /// The text format of a Realm value for a parameter of this type (`nil` = SQL NULL).
    /// Postgres's text of a numeric NaN and infinities (as `float8`'s).
    static let nonFinite: [String: Double] = ["NaN": .nan, "Infinity": .infinity, "-Infinity": -.infinity]

    public static func encode(_ v: Value) -> String? {
        switch v {
        case .null: nil
        case .bool(let b): b ? "t" : "f"
        case .int(let i): String(i)
        case .float(let f): f.isFinite ? String(f) : (f.isNaN ? "NaN" : (f > 0 ? "Infinity" : "-Infinity"))
        case .double(let d): d.isFinite ? String(d) : (d.isNaN ? "NaN" : (d > 0 ? "Infinity" : "-Infinity"))
        case .string(let s): s
        case .data(let d): "\\x" + d.map { String(format: "%02x", $0) }.joined()
        case .date(let t): t.iso8601
        case .decimal(let d): d.description
        case .uuid(let u): u.uuidString.lowercased()
        case .objectId(let o): o.description
        case .list(let items): "{" + items.map(Self.arrayElement).joined(separator: ",") + "}"
        }
    }

    private static func arrayElement(_ v: Value) -> String {
        guard let text = encode(v) else { return "NULL" }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    /// Parses a one-dimensional array literal: `{a,"b c",NULL}`.
    static func parseArray(_ text: String, typeName: String) throws -> [String?] {
        let fail = RealmAdapterError.invalidValue("a \(typeName) value is not a one-dimensional array literal")
        var chars = Array(text.unicodeScalars)
        // An explicit lower bound prefix: [0:2]={...}
        if chars.first == "[", let eq = chars.firstIndex(of: "=") { chars = Array(chars[(eq + 1)...]) }
        guard chars.first == "{", chars.last == "}" else { throw fail }
        var items: [String?] = []
        var i = 1
        let end = chars.count - 1
        if i == end { return [] }
        while i < end {
            var item = ""
            var quoted = false
            if chars[i] == "{" { throw fail }
            if chars[i] == "\"" {
                quoted = true
                i += 1
                while i < end, chars[i] != "\"" {
                    if chars[i] == "\\", i + 1 < end { i += 1 }
                    item.unicodeScalars.append(chars[i])
                    i += 1
                }
                guard i < end else { throw fail }
                i += 1
            } else {
                while i < end, chars[i] != "," {
                    item.unicodeScalars.append(chars[i])
                    i += 1
                }
            }
            items.append(!quoted && item == "NULL" ? nil : item)
            if i < end {
                guard chars[i] == "," else { throw fail }
                i += 1
            }
        }
        return items
    }
}

extension Data {
    /// Bytes from hexadecimal digits, or nil.
    package init?(hex: some StringProtocol) {
        let u = Array(hex.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(u.count / 2)
        for k in stride(from: 0, to: u.count, by: 2) {
            guard let h = hexDigit(u[k]), let l = hexDigit(u[k + 1]) else { return nil }
            out.append(h << 4 | l)
        }
        self.init(out)
    }
}

/// The value of an ASCII hexadecimal digit, or nil.
func hexDigit(_ c: UInt8) -> UInt8? {
    switch c {
    case 48...57: c - 48
    case 97...102: c - 87
    case 65...70: c - 55
    default: nil
    }
}
