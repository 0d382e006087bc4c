import Synchronization

/// Reading and writing schemas in the Realm JS model syntax, as JSON:
///
/// ```json
/// [{ "name": "Bus", "primaryKey": "id",
///    "properties": { "id": "int", "plate": "string?", "driver": "Driver", "stops": "Stop[]",
///                    "tags": "string[]", "rides": { "type": "linkingObjects", "objectType": "Ride", "property": "bus" } } }]
/// ```
extension Schema {
    /// Parses a JSON array of object schemas.
    /// - Parameter path: the JSON path of `json`, used in errors (e.g. `schema`).
    public init(json: JSONValue, path: String = "schema", code: RealmAdapterError.Code = .invalidSchema) throws {
        guard case .array(let items) = json else {
            throw RealmAdapterError.atJSONPath(
                path, "expected an array of object schemas, found \(json.kindName).", code: code)
        }
        var types: [ObjectSchema] = []
        for (i, item) in items.enumerated() {
            types.append(try ObjectSchema(json: item, path: "\(path)[\(i)]", code: code))
        }
        do {
            try self.init(types)
        } catch let e as RealmAdapterError {
            // Point at the offending entry of the file as well as the type.
            let at = e.context["type"].flatMap { name in types.firstIndex { $0.name == name } }
            throw e.adding(["json.path": at.map { "\(path)[\($0)]" } ?? path])
        }
    }

    /// The schema as a JSON array in Realm JS model syntax (inverse of ``init(json:path:code:)``).
    public var json: JSONValue { .array(types.map(\.json)) }

    /// ``json`` as compact text, built from each type's memoized text (per-user Realms write the
    /// same schema by the hundred thousand).
    var serializedJSON: String { "[" + types.map(\.serializedJSON).joined(separator: ",") + "]" }
}

extension ObjectSchema {
    public init(json: JSONValue, path: String, code: RealmAdapterError.Code = .invalidSchema) throws {
        var r = try JSONObjectReader(json, path: path, code: code)
        let name = try r.requiredString("name")
        let pk = try r.string("primaryKey")
        let dpk = try r.string("databasePrimaryKey")
        guard let props = try r.object("properties") else {
            throw r.error("properties", "is required (an object of name: type).")
        }
        _ = try r.bool("embedded").map { e in if e { throw r.error("embedded", "embedded objects are not supported.") }
        }
        try r.finish()
        var properties: [Property] = []
        for m in props.members {
            properties.append(try Property(name: m.key, json: m.value, path: props.path(m.key), code: code))
        }
        self.init(name: name, primaryKey: pk, databasePrimaryKey: dpk, properties: properties)
    }

    /// ``json`` as compact text, memoized for the last types serialized.
    var serializedJSON: String {
        if let text = Self.serialized.withLock({ $0[self] }) { return text }
        let text = json.serialized()
        Self.serialized.withLock { memo in
            if memo.count >= 256 { memo.removeAll() }
            memo[self] = text
        }
        return text
    }

    private static let serialized = Mutex<[ObjectSchema: String]>([:])

    public var json: JSONValue {
        var members: [JSONValue.Member] = [.init("name", .string(name))]
        if let primaryKey { members.append(.init("primaryKey", .string(primaryKey))) }
        if let databasePrimaryKey { members.append(.init("databasePrimaryKey", .string(databasePrimaryKey))) }
        members.append(.init("properties", .object(properties.map { .init($0.name, $0.json) })))
        return .object(members)
    }
}

extension Property {
    /// Parses a property from its short form (`"int?"`) or object form (`{ "type": "list", … }`).
    public init(name: String, json: JSONValue, path: String, code: RealmAdapterError.Code = .invalidSchema) throws {
        switch json {
        case .string(let s):
            guard let (type, optional) = Self.parseTypeString(s) else {
                throw RealmAdapterError.atJSONPath(
                    path,
                    "unknown property type '\(s)' (expected bool, int, float, double, string, data, date, decimal, "
                        + "uuid, objectId, a type name, with '?' for optional and '[]' for a list).",
                    code: code)
            }
            self.init(name: name, type: type, isOptional: optional)
        case .object:
            var r = try JSONObjectReader(json, path: path, code: code)
            let typeName = try r.requiredString("type")
            let objectType = try r.string("objectType")
            let property = try r.string("property")
            let optional = try r.bool("optional")
            let indexed = try r.bool("indexed") ?? false
            let watch = try r.bool("watchTable") ?? r.bool("watch_table") ?? false
            let rawDefault = r.value("default")
            _ = try r.string("mapTo").map { _ in throw r.error("mapTo", "use mapping.columns to rename properties.") }
            try r.finish()
            var type: PropertyType
            var isOptional = optional ?? false
            switch typeName {
            case "list":
                guard let objectType, let (elem, elemOptional) = Self.parseTypeString(objectType) else {
                    throw r.error("objectType", "a list needs an objectType: a type name or a value type.")
                }
                switch elem {
                case .scalar(let s):
                    type = .list(.scalar(s))
                    isOptional = isOptional || elemOptional
                case .link(let t): type = .list(.link(t))
                default: throw r.error("objectType", "lists of lists are not supported.")
                }
            case "linkingObjects":
                guard let objectType, let property else {
                    throw r.error(nil, "linkingObjects needs both objectType and property.")
                }
                type = .linkingObjects(objectType: objectType, property: property)
            case "object":
                guard let objectType else { throw r.error("objectType", "an object property needs an objectType.") }
                type = .link(objectType)
            default:
                guard let (t, o) = Self.parseTypeString(typeName) else {
                    throw r.error("type", "unknown property type '\(typeName)'.")
                }
                type = t
                isOptional = isOptional || o
                if let objectType, case .scalar = t {
                    throw r.error(
                        "objectType",
                        "objectType '\(objectType)' is only meaningful for list, object and linkingObjects.")
                }
            }
            var defaultValue: Value?
            if let rawDefault {
                do { defaultValue = try Value(json: rawDefault) } catch let e as RealmAdapterError {
                    throw r.error("default", e.message + ".")
                }
            }
            self.init(
                name: name, type: type, isOptional: isOptional, isIndexed: indexed,
                defaultValue: defaultValue, watchTable: watch)
        default:
            throw RealmAdapterError.atJSONPath(
                path, "expected a type string or an object, found \(json.kindName).", code: code)
        }
    }

    /// Parses `int`, `int?`, `int[]`, `int?[]`, `Item`, `Item[]`, `decimal128`, …
    static func parseTypeString(_ s: String) -> (PropertyType, Bool)? {
        var s = Substring(s)
        var isList = false
        if s.hasSuffix("[]") {
            isList = true
            s = s.dropLast(2)
        }
        var optional = false
        if s.hasSuffix("?") {
            optional = true
            s = s.dropLast()
        }
        guard !s.isEmpty, !s.contains("?"), !s.contains("[") else { return nil }
        let scalar: ScalarType? =
            switch s {
            case "decimal128": .decimal
            case "objectid": .objectId
            default: ScalarType(rawValue: String(s))
            }
        if ["list", "linkingObjects", "object", "mixed", "dictionary", "set"].contains(s) { return nil }
        if let scalar { return (isList ? .list(.scalar(scalar)) : .scalar(scalar), optional) }
        guard s.first!.isLetter || s.first == "_" else { return nil }
        return (isList ? .list(.link(String(s))) : .link(String(s)), true)
    }

    public var json: JSONValue {
        var extra: [JSONValue.Member] = []
        if isIndexed { extra.append(.init("indexed", .bool(true))) }
        if let defaultValue { extra.append(.init("default", defaultValue.json)) }
        if watchTable { extra.append(.init("watchTable", .bool(true))) }
        switch type {
        case .linkingObjects(let t, let p):
            return .object([
                .init("type", "linkingObjects"), .init("objectType", .string(t)), .init("property", .string(p)),
            ])
        case .list(let element) where watchTable:
            let objectType =
                switch element {
                case .scalar(let s): s.rawValue + (isOptional ? "?" : "")
                case .link(let t): t
                }
            return .object([.init("type", "list"), .init("objectType", .string(objectType))] + extra)
        default:
            if extra.isEmpty { return .string(typeString) }
            return .object([.init("type", .string(typeString))] + extra)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}
