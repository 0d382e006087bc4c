import Foundation

/// A property value as instructions carry it.
///
/// A link is the target object's primary key (or row key for types without one), so a link
/// value is one of the key kinds (`int`, `string`, `uuid`, `objectId`). A `list` value appears
/// in `INSERT` and `SET` values for list properties and stands for the whole list's contents.
public enum Value: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Timestamp)
    case decimal(DecimalNumber)
    case uuid(UUID)
    case objectId(ObjectId)
    case list([Value])

    /// A short name of the value's kind, for error messages (values themselves are never printed).
    public var kindName: String { scalarType?.rawValue ?? (isNull ? "null" : "list") }

    public var isNull: Bool { if case .null = self { true } else { false } }

    /// Whether both values are of the same case: coercion returns a value unchanged exactly
    /// when its kind already fits (lists excepted, whose elements may have changed).
    func isSameKind(as other: Value) -> Bool {
        guard let kind = scalarType else { return isNull && other.isNull }
        return other.has(kind)
    }

    /// Whether the value is of scalar type `s` (not null): coercion to `s` returns it as it is.
    /// A switch on the value alone, which copies nothing (matching a tuple of it would).
    func has(_ s: ScalarType) -> Bool { scalarType == s }

    /// The scalar type of a scalar value; nil for null and lists.
    var scalarType: ScalarType? {
        switch self {
        case .null, .list: nil
        case .bool: .bool
        case .int: .int
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .decimal: .decimal
        case .uuid: .uuid
        case .objectId: .objectId
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: Value...) { self = .list(elements) }
}

extension Value: CustomStringConvertible {
    /// The value as it appears in JSON (without quotes for strings), for display in tools.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): String(b)
        case .int(let i): String(i)
        case .float(let f): String(f)
        case .double(let d): String(d)
        case .string(let s): s
        case .data(let d): d.base64EncodedString()
        case .date(let t): t.iso8601
        case .decimal(let d): d.description
        case .uuid(let u): u.uuidString
        case .objectId(let o): o.description
        case .list(let l): "[" + l.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

extension Value {
    /// Equal as databases hold them: text byte for byte (UTF-8). Swift's `String` compares by
    /// canonical equivalence, so "café" composed (U+00E9) and decomposed (e + U+0301) would be
    /// one value, where SQLite, Postgres and Realm keep two keys, and a change from one to the
    /// other would be no change. The synthesized hash stays consistent with this: texts equal
    /// byte for byte are canonically equivalent, so they hash alike.
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.float(let x), .float(let y)): x == y
        case (.double(let x), .double(let y)): x == y
        case (.string(let x), .string(let y)): x.utf8.count == y.utf8.count && x.utf8.elementsEqual(y.utf8)
        case (.data(let x), .data(let y)): x == y
        case (.date(let x), .date(let y)): x == y
        case (.decimal(let x), .decimal(let y)): x == y
        case (.uuid(let x), .uuid(let y)): x == y
        case (.objectId(let x), .objectId(let y)): x == y
        case (.list(let x), .list(let y)): x == y
        default: false
        }
    }
}
