/// The checks of an INSERT of one type, without the database: its values converted to their
/// properties' types, defaults filled in, required values present, the primary key agreeing
/// with the identity. Shared by the store's writer and by ``PreparedInserts``, which runs them
/// ahead on another thread. A class, so that using it per row costs one retain.
final class InsertTyping {
    let type: ObjectSchema
    /// The identity's type: the primary key's, or int row keys.
    let keyType: ScalarType
    /// Property name → position in the row (single-value properties only).
    let slots: [String: Int]
    let slotProperties: [Property]
    /// The slots' property names, compared per value without copying a `Property`.
    let slotNames: [String]
    /// Per slot: the scalar type for the common case, so the hot loop need not copy a `Property`.
    let slotScalars: [ScalarType?]
    let slotOptional: [Bool]
    /// Per slot: the value used when an INSERT does not mention the property.
    let defaults: [Value?]
    let primaryKeySlot: Int?
    /// Types without a primary key bind their row key first.
    let rowKeyOffset: Int
    /// The row being checked, reused from row to row (one thread uses it at a time). A buffer
    /// rather than an array property: no exclusivity check per access in the hot loop.
    let row: UnsafeMutableBufferPointer<Value?>

    init(_ t: ObjectSchema, schema: Schema) throws {
        var slots: [String: Int] = [:], props: [Property] = [], defaults: [Value?] = []
        for p in t.properties {
            switch p.type {
            case .scalar, .link:
                slots[p.name] = props.count
                props.append(p)
                defaults.append(try p.defaultValue.map { try $0.coerced(to: p, in: schema) })
            default: continue
            }
        }
        type = t
        keyType = RealmTables.keyType(of: t)
        self.slots = slots
        slotProperties = props
        slotNames = props.map(\.name)
        slotScalars = props.map { p -> ScalarType? in if case .scalar(let s) = p.type { s } else { nil } }
        slotOptional = props.map(\.isOptional)
        self.defaults = defaults
        primaryKeySlot = t.primaryKey.flatMap { slots[$0] }
        rowKeyOffset = t.primaryKey == nil ? 1 : 0
        row = .allocate(capacity: props.count)
        row.initialize(repeating: nil)
    }

    deinit {
        row.deinitialize()
        row.deallocate()
    }

    func clearRow() { for k in row.indices { row[k] = nil } }

    /// Checks one INSERT of type `n` and leaves every slot's value in ``row``. Returns the typed
    /// identity, the values as history records them (defaults that applied included), and the
    /// list properties given, typed, to fill after the row.
    func check(_ n: String, _ rawId: Value, _ values: PropertyValues, schema: Schema) throws -> (Value, PropertyValues, [(Property, [Value])]) {
        let id: Value
        do { id = try rawId.coerced(to: keyType, optional: false) } catch let e as RealmAdapterError {
            throw RealmAdapterError(e.code, "identity of \(n): \(e.message)", context: ["type": n])
        }
        var typed = values
        var lists: [(Property, [Value])] = []
        for i in values.indices {
            // Values usually come in schema order: try that before hashing the name.
            let slot = i < slotNames.count && slotNames[i] == values.entries[i].name ? i : slots[values.entries[i].name]
            // Usually of the property's type already: kept as it is, without a copy on the way.
            if let slot, let scalar = slotScalars[slot], values.entries[i].value.has(scalar) {
                row[slot] = values.entries[i].value
                continue
            }
            let e = values[i]
            let v: Value
            do {
                if let slot, let scalar = slotScalars[slot] {
                    v = try e.value.coerced(to: scalar, optional: slotOptional[slot])
                } else {
                    guard let p = slot.map({ slotProperties[$0] }) ?? type[property: e.name] else {
                        throw RealmAdapterError(.schemaViolation, "unknown property '\(e.name)' of type '\(n)'", context: ["type": n, "property": e.name])
                    }
                    v = try e.value.coerced(to: p, in: schema)
                    if slot == nil, case .list(let items) = v, !items.isEmpty { lists.append((p, items)) }
                }
            } catch let err as RealmAdapterError where err.code != .schemaViolation {
                throw RealmAdapterError(err.code, "\(n).\(e.name): \(err.message)", context: ["type": n, "property": e.name])
            }
            if !v.isSameKind(as: e.value) { typed.setValue(v, at: i) }
            if let slot { row[slot] = v }
        }
        if let k = primaryKeySlot {
            if let given = row[k], given != id {
                throw RealmAdapterError(.schemaViolation, "the values of INSERT \(n) give primary key '\(type.primaryKey!)' a different value than its identity",
                                        context: ["type": n, "property": type.primaryKey!])
            }
            row[k] = id
        }
        for k in row.indices where row[k] == nil {
            // A default that applies is recorded, so followers need not know the schema's defaults.
            if let d = defaults[k] {
                typed.append(slotProperties[k].name, d)
                row[k] = d
            } else if slotOptional[k] {
                row[k] = .null
            } else {
                throw RealmAdapterError(.invalidValue, "INSERT \(n) has no value for required property '\(slotProperties[k].name)' (and it has no default)",
                                        context: ["type": n, "property": slotProperties[k].name])
            }
        }
        return (id, typed, lists)
    }
}

/// INSERTs of one type checked, typed and encoded for history ahead of the write, on another
/// thread (a bulk load's reading thread), so that the writing thread only stores them
/// (``WriteTransaction/insert(_:)``). For types with a primary key whose properties are all
/// scalars: links need the Realm to check their targets, lists a second table.
public struct PreparedInserts: @unchecked Sendable {
    // @unchecked: `typing`'s row buffer is used only by the thread that adds rows.
    public let type: ObjectSchema
    let typing: InsertTyping
    let schema: Schema
    /// Values per row, in slot order, rows one after another.
    private(set) var values: [Value] = []
    /// The INSERT instructions, as history encodes them (without the header).
    private(set) var encoded = BinaryWriter()
    public private(set) var count = 0
    var width: Int { typing.slotProperties.count }

    /// Whether INSERTs of `t` can be prepared.
    public static func canPrepare(_ t: ObjectSchema) -> Bool {
        t.primaryKey != nil && t.properties.allSatisfy {
            switch $0.type {
            case .scalar, .linkingObjects: true  // linkingObjects are computed, not stored
            case .link, .list: false
            }
        }
    }

    /// - Parameter schema: the schema `type` belongs to (for its defaults); the Realm's type must
    ///   be `type` exactly when they are stored.
    public init(_ type: ObjectSchema, schema: Schema, capacity: Int = 0) throws {
        precondition(Self.canPrepare(type), "PreparedInserts need a type with a primary key and scalar properties only")
        self.type = type
        self.schema = schema
        typing = try InsertTyping(type, schema: schema)
        values.reserveCapacity(capacity * typing.slotProperties.count)
        // Room for a typical row's record, so the batch's bytes are not copied as they grow.
        encoded.bytes.reserveCapacity(capacity * (16 + 16 * typing.slotProperties.count))
    }

    /// Each row as an INSERT's identity and values (every single-value property, in slot order).
    public func forEachRow(_ body: (Value, PropertyValues) throws -> Void) rethrows {
        let names = typing.slotNames, key = typing.primaryKeySlot!, w = width
        for r in 0..<count {
            let row = values[(r * w)..<(r * w + w)]
            try body(row[r * w + key], PropertyValues(zip(names, row).map { PropertyValues.Entry($0, $1) }))
        }
    }

    /// Checks one INSERT as the store would, and keeps it.
    public mutating func add(_ identity: Value, _ given: PropertyValues) throws {
        let (id, typed, _): (Value, PropertyValues, [(Property, [Value])])
        do { (id, typed, _) = try typing.check(type.name, identity, given, schema: schema) } catch {
            typing.clearRow()
            throw error
        }
        // Moved out, which leaves the row clear for the next one.
        for k in typing.row.indices { values.append(typing.row[k].take()!) }
        encoded.insert(type.name, id, typed)
        count += 1
    }
}
