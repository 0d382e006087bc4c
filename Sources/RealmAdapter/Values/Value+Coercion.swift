import Foundation

extension Value {
    /// The value converted to what `property` stores, or an `invalidValue` error.
    ///
    /// JSON carries dates, data, decimals, UUIDs and ObjectIds as strings, and every number as
    /// int or double; this is where they get their real type, driven by the schema. A value that
    /// already has the right type is returned as is. Links take the target type's key type.
    public func coerced(to property: Property, in schema: Schema) throws -> Value {
        switch property.type {
        case .scalar(let s):
            return try coerced(to: s, optional: property.isOptional)
        case .link(let target):
            if isNull { return .null }
            return try coercedKey(of: target, in: schema)
        case .list(let element):
            let items: [Value]
            switch self {
            case .list(let l): items = l
            case .null: items = []
            default: throw RealmAdapterError.expected("a list", found: kindName)
            }
            return .list(
                try items.map { item in
                    switch element {
                    case .scalar(let s): try item.coerced(to: s, optional: property.isOptional)
                    case .link(let target): try item.coercedKey(of: target, in: schema)
                    }
                })
        case .linkingObjects:
            throw RealmAdapterError.computedProperty(type: nil, property: property.name)
        }
    }

    /// The value as an identity (primary key, or row key) of an object of `typeName`.
    public func coercedKey(of typeName: String, in schema: Schema) throws -> Value {
        guard let t = schema[type: typeName] else {
            throw RealmAdapterError.unknownType(typeName)
        }
        guard let pk = t.primaryKeyProperty, case .scalar(let s) = pk.type else {
            guard case .int = self else {
                throw RealmAdapterError.expected(
                    "an int row key for '\(typeName)' (it has no primary key)", found: kindName)
            }
            return self
        }
        return try coerced(to: s, optional: pk.isOptional)
    }

    /// The value converted to a scalar type: exactly, or not at all.
    ///
    /// This is the one place that decides whether outside input is a value (instructions from
    /// JSON or Swift, GraphQL inputs, query literals, schema defaults). A value is kept as given
    /// (floats bit for bit, decimals and ints digit for digit, dates instant for instant) or
    /// refused with the reason: a string holding NUL, a number a float would round to zero or
    /// infinity, an int or decimal that already lost digits as a double, base64 that is not
    /// canonical, a leap second.
    public func coerced(to type: ScalarType, optional: Bool) throws -> Value {
        if has(type) { return try storable() }
        // Text holding NUL is no value of any type: Foundation's parsers stop at it ("uuid\0junk").
        if case .string(let s) = self, Self.containsNUL(s) { throw RealmAdapterError.nulInString() }
        func mismatch() -> RealmAdapterError {
            RealmAdapterError.expected("\(type.rawValue)\(optional ? "?" : "")", found: kindName)
        }
        switch (type, self) {
        case (_, .null):
            guard optional else {
                throw RealmAdapterError.nullInRequired(type)
            }
            return .null
        case (.float, .double(let d)): return .float(try Self.float(d))
        case (.float, .int(let i)): return .float(Float(i))
        case (.float, .decimal(let d)): return .float(try Self.float(d.double))
        case (.float, .string(let s)), (.double, .string(let s)):
            // JSON has no NaN or infinity: they travel as this text (``json``).
            guard let d = Self.nonFinite[s] else { throw mismatch() }
            return type == .float ? .float(Float(d)) : .double(d)
        case (.double, .int(let i)): return .double(Double(i))
        // A database's numeric, or a JSON number of many digits, for a double (the nearest
        // double; a decimal's at most 128 fraction digits never round to 0).
        case (.double, .decimal(let d)): return .double(d.double)
        // A database's uuid for a string property, as Postgres prints it.
        case (.string, .uuid(let u)): return .string(u.text)
        case (.double, .float(let f)): return .double(Double(f))
        case (.int, .double(let d)):
            guard d.rounded() == d else { throw mismatch() }
            guard abs(d) <= Self.largestSafeInteger else { throw RealmAdapterError.intRoundedAsDouble() }
            return .int(Int64(d))
        case (.int, .decimal(let d)):
            guard let i = d.exactInt64 else { throw d.isIntegral ? RealmAdapterError.intOutOfRange() : mismatch() }
            return .int(i)
        case (.data, .string(let s)):
            // Foundation decodes some text that is not base64 ("====" as one zero byte): only
            // the canonical text of the bytes it decodes to is taken.
            guard let d = Data(base64Encoded: s), d.base64EncodedString() == s else {
                throw RealmAdapterError.malformed("base64 text for data (padded, without line breaks)")
            }
            return .data(d)
        case (.date, .string(let s)):
            guard let t = Timestamp(iso8601: s) else {
                if s.contains(":60") { throw RealmAdapterError.leapSecond() }
                throw RealmAdapterError.malformed("an ISO-8601 date such as 2024-05-01T12:00:00.000Z")
            }
            guard t.isStorable else { throw RealmAdapterError.dateOutOfRange("the date") }
            return .date(t)
        case (.decimal, .string(let s)):
            guard let d = DecimalNumber(exactly: s) else {
                throw RealmAdapterError.malformed(DecimalNumber.expected)
            }
            return .decimal(d)
        case (.decimal, .int(let i)): return .decimal(DecimalNumber(i))
        case (.decimal, .double(let d)):
            guard let n = DecimalNumber(d) else {
                throw RealmAdapterError.malformed(DecimalNumber.expected)
            }
            guard JSONValue.significantDigits(ArraySlice(n.description.utf8)) <= JSONValue.digitsADoubleKeeps else {
                throw RealmAdapterError.decimalRoundedAsDouble()
            }
            return .decimal(n)
        case (.uuid, .string(let s)):
            guard let u = UUID(uuidString: s) else {
                throw RealmAdapterError.malformed("a UUID such as 123e4567-e89b-12d3-a456-426614174000")
            }
            return .uuid(u)
        case (.objectId, .string(let s)):
            guard let o = ObjectId(s) else {
                throw RealmAdapterError.malformed("an ObjectId of 24 hex digits")
            }
            return .objectId(o)
        default:
            throw mismatch()
        }
    }

    /// The value itself, when a store can keep it exactly: a string without NUL (SQLite reads
    /// text up to its first NUL, Postgres text cannot hold one), a date within a Realm's range.
    public func storable() throws -> Value {
        guard isStorableAsIs else {
            if case .string = self { throw RealmAdapterError.nulInString() }
            throw RealmAdapterError.dateOutOfRange("the date")
        }
        return self
    }

    /// Whether ``storable()`` takes the value as it is: the check of the paths that keep a
    /// value of the right kind without coercing it.
    public var isStorableAsIs: Bool {
        switch self {
        case .string(let s): !Self.containsNUL(s)
        case .date(let t): t.isStorable
        default: true
        }
    }

    /// Whether `s` holds U+0000 (memchr over its bytes: strings are checked on every write).
    static func containsNUL(_ s: String) -> Bool {
        s.utf8.withContiguousStorageIfAvailable { b in b.baseAddress.map { memchr($0, 0, b.count) != nil } ?? false }
            ?? s.utf8.contains(0)
    }

    /// 2^53 - 1: the largest integer whose double no other integer rounds to (2^53 + 1 rounds
    /// to 2^53), JavaScript's `Number.MAX_SAFE_INTEGER`.
    static let largestSafeInteger: Double = 9_007_199_254_740_991

    /// `d` as a float: refused when it would round to infinity or to zero. NaN and infinities
    /// stay what they are.
    private static func float(_ d: Double) throws -> Float {
        let f = Float(d)
        if d.isFinite && !f.isFinite {
            throw RealmAdapterError.outOfRange("the number", range: "about ±3.4e38 for a float")
        }
        if f == 0 && d != 0 { throw RealmAdapterError.roundsToZero("a float") }
        return f
    }
}

// MARK: - JSON form

extension Value {
    /// The untyped value of a JSON document; `coerced(to:in:)` gives it its schema type.
    ///
    /// A number a double would not keep (``JSONValue/number(_:)``) becomes a decimal, so that
    /// coercion to an int or a decimal keeps its every digit. A JSON object is no value of any
    /// property: it is refused, not stored as its text.
    public init(json: JSONValue) throws {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .number(let text): self = DecimalNumber(exactly: text).map(Value.decimal) ?? .double(Double(text) ?? .nan)
        case .string(let s): self = .string(s)
        case .array(let a): self = .list(try a.map(Value.init(json:)))
        case .object: throw RealmAdapterError.expected("a value", found: "a JSON object")
        }
    }

    /// The text of a float or double that JSON cannot write as a number.
    static let nonFinite: [String: Double] = ["NaN": .nan, "Infinity": .infinity, "-Infinity": -.infinity]

    /// The JSON form of instructions (README: Instructions in JSON): dates as ISO-8601, data as
    /// base64, decimals, UUIDs and ObjectIds as strings, and a float or double that is NaN or
    /// infinite as `"NaN"`, `"Infinity"` or `"-Infinity"` (JSON has no such numbers).
    public var json: JSONValue {
        switch self {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .float(let f): Self.json(Double(f))
        case .double(let d): Self.json(d)
        case .string(let s): .string(s)
        case .data(let d): .string(d.base64EncodedString())
        case .date(let t): .string(t.iso8601)
        case .decimal(let d): .string(d.description)
        case .uuid(let u): .string(u.text)
        case .objectId(let o): .string(o.description)
        case .list(let l): .array(l.map(\.json))
        }
    }

    private static func json(_ d: Double) -> JSONValue {
        d.isFinite ? .double(d) : .string(d.isNaN ? "NaN" : d > 0 ? "Infinity" : "-Infinity")
    }
}

extension UUID {
    /// The UUID as Postgres and RFC 9562 print it: lower case (Foundation's `uuidString` is upper case).
    var text: String { uuidString.lowercased() }
}
