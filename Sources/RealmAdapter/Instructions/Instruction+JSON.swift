/// The JSON form of instructions (README: Instructions in JSON), with the legacy snake_case field names:
///
/// ```json
/// {"type": "INSERT", "object_type": "Task", "identity": 1, "values": {"title": "Buy milk", "due": "2024-05-01T09:00:00.000Z"}}
/// {"type": "LIST_INSERT", "object_type": "Bus", "identity": 7, "property": "stops", "list_index": 0, "object_identity": 3}
/// {"type": "LIST_INSERT", "object_type": "Task", "identity": 1, "property": "tags", "list_index": 0, "value": "home"}
/// ```
///
/// JSON has no date, data, decimal, UUID or ObjectId type, so decoded values are untyped until
/// a schema types them: ``Instruction/decodeTransaction(_:schema:)`` does that as it reads,
/// following the ADD_TYPE and ADD_PROPERTIES instructions of the same transaction.
extension Instruction {
    /// The instruction as JSON. With a `schema`, LIST_SET and LIST_INSERT elements of link lists
    /// are written as `object_identity` (legacy name); elements of primitive lists as `value`.
    public func json(schema: Schema? = nil) -> JSONValue {
        var m: [JSONValue.Member] = [.init("type", .string(typeName)), .init("object_type", .string(objectType))]
        func add(_ k: String, _ v: JSONValue) { m.append(.init(k, v)) }
        func values(_ v: PropertyValues) -> JSONValue { .object(v.map { .init($0.name, $0.value.json) }) }
        func elementField(_ property: String) -> String {
            // Lists of links name the target object; lists of primitives carry the value itself.
            if case .list(.link) = schema?[type: objectType]?[property: property]?.type { return "object_identity" }
            return "value"
        }
        switch self {
        case .insert(_, let id, let v), .set(_, let id, let v):
            add("identity", id.json)
            add("values", values(v))
        case .delete(_, let id):
            add("identity", id.json)
        case .clear:
            break
        case .listSet(_, let id, let p, let i, let v), .listInsert(_, let id, let p, let i, let v):
            add("identity", id.json)
            add("property", .string(p))
            add("list_index", .int(Int64(i)))
            add(elementField(p), v.json)
        case .listErase(_, let id, let p, let i):
            add("identity", id.json)
            add("property", .string(p))
            add("list_index", .int(Int64(i)))
        case .listClear(_, let id, let p):
            add("identity", id.json)
            add("property", .string(p))
        case .addType(let s):
            add("primary_key", s.primaryKey.map(JSONValue.string) ?? .null)
            if let d = s.databasePrimaryKey { add("database_primary_key", .string(d)) }
            add("properties", .object(s.properties.map { .init($0.name, $0.json) }))
        case .addProperties(_, let props):
            add("properties", .object(props.map { .init($0.name, $0.json) }))
        case .changeIdentity(_, let id, let new):
            add("identity", id.json)
            add("new_identity", new.json)
        }
        return .object(m)
    }

    /// Parses one instruction without typing its values (see ``decodeTransaction(_:schema:)``).
    public init(json: JSONValue, path: String = "$") throws {
        var r = try JSONObjectReader(json, path: path, code: .invalidInstruction)
        let type = try r.requiredString("type")
        let objectType = try r.requiredString("object_type")
        func value(_ json: JSONValue, at path: String) throws -> Value {
            do { return try Value(json: json) } catch let e as RealmAdapterError {
                throw RealmAdapterError.atJSONPath(path, e.message + ".", code: .invalidInstruction)
            }
        }
        func identity(_ key: String = "identity") throws -> Value {
            guard let v = r.value(key) else { throw r.error(key, "is required for \(type).") }
            return try value(v, at: r.path(key))
        }
        func index() throws -> Int {
            guard let i = try r.int("list_index", in: 0...Int64(Int32.max)) else {
                throw r.error("list_index", "is required for \(type).")
            }
            return i
        }
        func property() throws -> String {
            guard let p = try r.string("property") else { throw r.error("property", "is required for \(type).") }
            return p
        }
        func values() throws -> PropertyValues {
            guard let o = try r.object("values") else { throw r.error("values", "is required for \(type).") }
            return PropertyValues(try o.members.map { .init($0.key, try value($0.value, at: o.path($0.key))) })
        }
        func element() throws -> Value {
            let a = r.members.first { $0.key == "object_identity" }
            let b = r.members.first { $0.key == "value" }
            _ = r.value("object_identity")
            _ = r.value("value")
            guard let v = a ?? b else {
                throw r.error(nil, "\(type) needs object_identity (lists of links) or value (lists of primitives).")
            }
            if a != nil && b != nil { throw r.error(nil, "give object_identity or value, not both.") }
            return try value(v.value, at: r.path(v.key))
        }
        func properties() throws -> [Property] {
            guard let o = try r.object("properties") else { throw r.error("properties", "is required for \(type).") }
            return try o.members.map {
                try Property(name: $0.key, json: $0.value, path: o.path($0.key), code: .invalidInstruction)
            }
        }
        switch type {
        case "INSERT": self = .insert(objectType: objectType, identity: try identity(), values: try values())
        case "SET": self = .set(objectType: objectType, identity: try identity(), values: try values())
        case "DELETE": self = .delete(objectType: objectType, identity: try identity())
        case "CLEAR": self = .clear(objectType: objectType)
        case "LIST_SET":
            self = .listSet(
                objectType: objectType, identity: try identity(), property: try property(), index: try index(),
                value: try element())
        case "LIST_INSERT":
            self = .listInsert(
                objectType: objectType, identity: try identity(), property: try property(), index: try index(),
                value: try element())
        case "LIST_ERASE":
            self = .listErase(
                objectType: objectType, identity: try identity(), property: try property(), index: try index())
        case "LIST_CLEAR":
            self = .listClear(objectType: objectType, identity: try identity(), property: try property())
        case "ADD_TYPE":
            let pk = try r.string("primary_key")
            let dpk = try r.string("database_primary_key")
            self = .addType(
                ObjectSchema(name: objectType, primaryKey: pk, databasePrimaryKey: dpk, properties: try properties()))
        case "ADD_PROPERTIES":
            self = .addProperties(objectType: objectType, properties: try properties())
        case "CHANGE_IDENTITY":
            self = .changeIdentity(
                objectType: objectType, identity: try identity(), newIdentity: try identity("new_identity"))
        default:
            throw r.error(
                "type",
                "unknown instruction type '\(type)' (expected INSERT, SET, DELETE, CLEAR, LIST_SET, "
                    + "LIST_INSERT, LIST_ERASE, LIST_CLEAR, ADD_TYPE, ADD_PROPERTIES or CHANGE_IDENTITY)."
            )
        }
        try r.finish()
    }

    /// Parses a JSON array of instructions (one transaction) and types its values against
    /// `schema`, following the transaction's own schema changes. Values that the schema cannot
    /// type are left as parsed; applying them reports the precise error.
    public static func decodeTransaction(_ json: JSONValue, schema: Schema) throws -> [Instruction] {
        guard case .array(let items) = json else {
            throw RealmAdapterError.atJSONPath(
                "$", "expected an array of instructions, found \(json.kindName).", code: .invalidInstruction)
        }
        var schema = schema
        return try items.enumerated().map { i, item in
            let instruction = try Instruction(json: item, path: "[\(i)]")
            let typed = (try? instruction.coerced(in: schema)) ?? instruction
            if let next = try? schema.applying(typed) { schema = next }
            return typed
        }
    }
}
