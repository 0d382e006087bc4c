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

    /// The value converted to a scalar type.
    public func coerced(to type: ScalarType, optional: Bool) throws -> Value {
        if has(type) { return self }
        func mismatch() -> RealmAdapterError {
            RealmAdapterError.expected("\(type.rawValue)\(optional ? "?" : "")", found: kindName)
        }
        switch (type, self) {
        case (_, .null):
            guard optional else {
                throw RealmAdapterError.nullInRequired(type)
            }
            return .null
        case (.bool, .bool), (.int, .int), (.float, .float), (.double, .double), (.string, .string), (.data, .data),
            (.date, .date), (.decimal, .decimal), (.uuid, .uuid), (.objectId, .objectId):
            return self
        case (.float, .double(let d)):
            guard Float(d).isFinite else {
                throw RealmAdapterError.outOfRange("the number", range: "about ±3.4e38 for a float")
            }
            return .float(Float(d))
        case (.float, .int(let i)): return .float(Float(i))
        case (.float, .string(let s)), (.double, .string(let s)):
            // JSON has no NaN or infinity: they travel as this text (``json``).
            guard let d = Self.nonFinite[s] else { throw mismatch() }
            return type == .float ? .float(Float(d)) : .double(d)
        case (.double, .int(let i)): return .double(Double(i))
        // A database's numeric for a double or float property (the nearest binary value).
        case (.double, .decimal(let d)): return .double(d.double)
        case (.float, .decimal(let d)):
            guard Float(d.double).isFinite else {
                throw RealmAdapterError.outOfRange("the number", range: "about ±3.4e38 for a float")
            }
            return .float(Float(d.double))
        // A database's uuid for a string property, as Postgres prints it.
        case (.string, .uuid(let u)): return .string(u.text)
        case (.double, .float(let f)): return .double(Double(f))
        case (.int, .double(let d)) where d.rounded() == d && abs(d) < 9.2e18: return .int(Int64(d))
        case (.data, .string(let s)):
            guard let d = Data(base64Encoded: s) else {
                throw RealmAdapterError.malformed("base64 text for data")
            }
            return .data(d)
        case (.date, .string(let s)):
            guard let t = Timestamp(iso8601: s) else {
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
}

// MARK: - JSON form

extension Value {
    /// The untyped value of a JSON document; `coerced(to:in:)` gives it its schema type.
    public init(json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .array(let a): self = .list(a.map(Value.init(json:)))
        case .object(let m): self = .string(JSONValue.object(m).serialized())
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
