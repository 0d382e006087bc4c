/// One change to a Realm, in the legacy connector vocabulary.
///
/// A transaction is an ordered list of instructions. `identity` is the object's primary key
/// value, or its row key (an `int`) for a type without a primary key. In the LIST_* instructions
/// `value` is the target object's identity for lists of links, or the element itself for lists
/// of primitives (JSON field `object_identity` or `value`; see ``Instruction/json(schema:)``).
public enum Instruction: Hashable, Sendable {
    case insert(objectType: String, identity: Value, values: PropertyValues)
    /// Only the properties that changed.
    case set(objectType: String, identity: Value, values: PropertyValues)
    case delete(objectType: String, identity: Value)
    /// Deletes every object of the type.
    case clear(objectType: String)
    case listSet(objectType: String, identity: Value, property: String, index: Int, value: Value)
    case listInsert(objectType: String, identity: Value, property: String, index: Int, value: Value)
    /// Removes the element at `index`; a linked object survives.
    case listErase(objectType: String, identity: Value, property: String, index: Int)
    case listClear(objectType: String, identity: Value, property: String)
    /// Adds a type, or adds properties to an existing type of the same name.
    case addType(ObjectSchema)
    case addProperties(objectType: String, properties: [Property])
    /// Changes the row key of an object of a type without a primary key.
    case changeIdentity(objectType: String, identity: Value, newIdentity: Value)

    /// The legacy name of the instruction type: `INSERT`, `LIST_SET`, …
    public var typeName: String {
        switch self {
        case .insert: "INSERT"
        case .set: "SET"
        case .delete: "DELETE"
        case .clear: "CLEAR"
        case .listSet: "LIST_SET"
        case .listInsert: "LIST_INSERT"
        case .listErase: "LIST_ERASE"
        case .listClear: "LIST_CLEAR"
        case .addType: "ADD_TYPE"
        case .addProperties: "ADD_PROPERTIES"
        case .changeIdentity: "CHANGE_IDENTITY"
        }
    }

    public var objectType: String {
        switch self {
        case .insert(let t, _, _), .set(let t, _, _), .delete(let t, _), .clear(let t),
            .listSet(let t, _, _, _, _), .listInsert(let t, _, _, _, _), .listErase(let t, _, _, _),
            .listClear(let t, _, _), .addProperties(let t, _), .changeIdentity(let t, _, _):
            t
        case .addType(let s): s.name
        }
    }

    /// The identity of the object the instruction changes (nil for a whole type's or schema's).
    var identity: Value? {
        switch self {
        case .insert(_, let id, _), .set(_, let id, _), .delete(_, let id), .listSet(_, let id, _, _, _),
            .listInsert(_, let id, _, _, _), .listErase(_, let id, _, _), .listClear(_, let id, _),
            .changeIdentity(_, let id, _):
            id
        case .clear, .addType, .addProperties: nil
        }
    }

    /// `INSERT Task`, `LIST_ERASE Bus.stops`: how errors and logs name an instruction
    /// (no values: they may be private).
    public var summary: String {
        switch self {
        case .listSet(let t, _, let p, _, _), .listInsert(let t, _, let p, _, _), .listErase(let t, _, let p, _),
            .listClear(let t, _, let p):
            "\(typeName) \(t).\(p)"
        default: "\(typeName) \(objectType)"
        }
    }
}

/// Property values of an INSERT or SET, in order.
public struct PropertyValues: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public struct Entry: Hashable, Sendable {
        public var name: String
        public var value: Value
        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var entries: [Entry]

    public init(_ entries: [Entry] = []) { self.entries = entries }
    public init(dictionaryLiteral elements: (String, Value)...) { entries = elements.map { Entry($0, $1) } }

    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Entry { entries[position] }

    public subscript(name: String) -> Value? {
        get { entries.first { $0.name == name }?.value }
        set {
            if let i = entries.firstIndex(where: { $0.name == name }) {
                if let newValue { entries[i].value = newValue } else { entries.remove(at: i) }
            } else if let newValue {
                entries.append(Entry(name, newValue))
            }
        }
    }

    public mutating func append(_ name: String, _ value: Value) { entries.append(Entry(name, value)) }
    mutating func setValue(_ value: Value, at index: Int) { entries[index].value = value }
    public mutating func reserveCapacity(_ n: Int) { entries.reserveCapacity(n) }
    public mutating func removeAll(keepingCapacity: Bool = false) {
        entries.removeAll(keepingCapacity: keepingCapacity)
    }
}

extension Instruction {
    /// ADD_TYPE or ADD_PROPERTIES.
    public var isSchemaChange: Bool {
        switch self {
        case .addType, .addProperties: true
        default: false
        }
    }
}
