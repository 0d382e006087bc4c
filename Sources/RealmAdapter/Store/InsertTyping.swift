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
    /// Per slot: the target type of a link, or nil.
    let slotTargets: [String?]
    let slotOptional: [Bool]
    /// Per slot: the value used when an INSERT does not mention the property.
    let defaults: [Value?]
    let primaryKeySlot: Int?
    /// Types without a primary key bind their row key first.
    let rowKeyOffset: Int
    /// The row being checked, reused from row to row (one thread uses it at a time). A buffer
    /// rather than an array property: no exclusivity check per access in the hot loop.
    let row: UnsafeMutableBufferPointer<Value?>
    /// The first bytes of a history record of an INSERT of this type: its tag and the type's
    /// name (``PreparedInserts``).
    let recordStart: UnsafeRawBufferPointer

    init(_ t: ObjectSchema, schema: Schema) throws {
        var slots: [String: Int] = [:]
        var props: [Property] = []
        var defaults: [Value?] = []
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
        slotTargets = props.map(\.type.linkTarget)
        slotOptional = props.map(\.isOptional)
        self.defaults = defaults
        primaryKeySlot = t.primaryKey.flatMap { slots[$0] }
        rowKeyOffset = t.primaryKey == nil ? 1 : 0
        row = .allocate(capacity: props.count)
        row.initialize(repeating: nil)
        var start = BinaryWriter()
        start.byte(1)
        start.string(t.name)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: start.bytes.count, alignment: 1)
        start.bytes.withUnsafeBytes { bytes.copyMemory(from: $0) }
        recordStart = UnsafeRawBufferPointer(bytes)
    }

    deinit {
        row.deinitialize()
        row.deallocate()
        recordStart.deallocate()
    }

    func clearRow() { for k in row.indices { row[k] = nil } }

    /// Whether an INSERT names a property that is not a single value (a list, or one the type
    /// does not have): it is not stored with a run's single statement.
    func mayGiveAList(_ insert: Instruction) -> Bool {
        guard case .insert(_, _, let values) = insert else { return true }
        return values.entries.contains { slots[$0.name] == nil }
    }

    /// Checks one INSERT of type `n` and leaves every slot's value in ``row``. Returns the typed
    /// identity, the values as history records them (defaults that applied included), and the
    /// list properties given, typed, to fill after the row.
    func check(_ n: String, _ rawId: Value, _ values: PropertyValues, schema: Schema) throws -> (
        Value, PropertyValues, [(Property, [Value])]
    ) {
        let id = try identity(n, rawId)
        var typed = values
        var lists: [(Property, [Value])] = []
        for i in values.indices {
            // Values usually come in schema order: try that before hashing the name.
            let slot = i < slotNames.count && slotNames[i] == values.entries[i].name ? i : slots[values.entries[i].name]
            // Usually of the property's type already: kept as it is, without a copy on the way.
            if let slot, let scalar = slotScalars[slot], values.entries[i].value.has(scalar),
                values.entries[i].value.isStorableAsIs
            {
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
                        throw RealmAdapterError.unknownProperty(type: n, property: e.name)
                    }
                    v = try e.value.coerced(to: p, in: schema)
                    if slot == nil, case .list(let items) = v, !items.isEmpty { lists.append((p, items)) }
                }
            } catch let err as RealmAdapterError where err.code != .schemaViolation {
                throw err.located("\(n).\(e.name)", ["type": n, "property": e.name])
            }
            if !v.isSameKind(as: e.value) { typed.setValue(v, at: i) }
            if let slot { row[slot] = v }
        }
        if let k = primaryKeySlot {
            if let given = row[k], given != id {
                throw RealmAdapterError.primaryKeyDisagrees(type: n, property: type.primaryKey!)
            }
            row[k] = id
        }
        for k in row.indices where row[k] == nil {
            let v = try unmentioned(k, n)
            // A default that applies is recorded, so followers need not know the schema's defaults.
            if defaults[k] != nil { typed.append(slotProperties[k].name, v) }
            row[k] = v
        }
        return (id, typed, lists)
    }

    /// The identity of an INSERT of `n`, of the key's type.
    func identity(_ n: String, _ rawId: Value) throws -> Value {
        do { return try rawId.coerced(to: keyType, optional: false) } catch let e as RealmAdapterError {
            throw e.located("identity of \(n)", ["type": n])
        }
    }

    /// What an INSERT of `n` that does not mention slot `k` gives it: its default, else null
    /// if it is optional; an error for a required property without a default.
    func unmentioned(_ k: Int, _ n: String) throws -> Value {
        if let d = defaults[k] { return d }
        guard slotOptional[k] else {
            throw RealmAdapterError.requiredValueMissing(type: n, property: slotProperties[k].name)
        }
        return .null
    }
}

/// INSERTs of one type checked, typed and encoded for history ahead of the write, on another
/// thread (a bulk load's reading thread), so that the writing thread only stores them
/// (``WriteTransaction/insert(_:)``). For types with a primary key (the writer checks the links'
/// targets before it stores a row). Rows carry single values only: their lists start empty, as
/// a loader's rows do (it fills lists from their link tables afterwards); a row that gives a
/// list's items is refused.
public struct PreparedInserts: @unchecked Sendable {
    // @unchecked: `typing`'s row buffer is used only by the thread that adds rows.
    public let type: ObjectSchema
    let typing: InsertTyping
    let schema: Schema
    /// The INSERT instructions, as history encodes them (without the header), each with every
    /// slot's value in slot order: the writer binds them from here (``RealmTables/bind(_:to:at:db:)-(BinaryReader,_,_,_)``),
    /// so what the table gets is what history says.
    private(set) var encoded = BinaryWriter()
    public private(set) var count = 0
    var width: Int { typing.slotProperties.count }

    /// Whether INSERTs of `t` can be prepared (and stored many rows per statement).
    public static func canPrepare(_ t: ObjectSchema) -> Bool { t.primaryKey != nil }

    /// - Parameter schema: the schema `type` belongs to (for its defaults); the Realm's type must
    ///   be `type` exactly when they are stored.
    public init(_ type: ObjectSchema, schema: Schema, capacity: Int = 0) throws {
        precondition(Self.canPrepare(type), "PreparedInserts need a type with a primary key")
        self.type = type
        self.schema = schema
        typing = try InsertTyping(type, schema: schema)
        // Room for a typical row's record, so the batch's bytes are not copied as they grow.
        encoded.bytes.reserveCapacity(capacity * (16 + 16 * typing.slotProperties.count))
    }

    /// Each row as an INSERT's identity and values (every single-value property, in slot order).
    public func forEachRow(_ body: (Value, PropertyValues) throws -> Void) throws {
        try encoded.bytes.withUnsafeBytes { buffer in
            var r = BinaryReader(buffer: buffer)
            for _ in 0..<count {
                guard case .insert(_, let id, let values) = try r.instruction() else { throw BinaryReader.corrupt }
                try body(id, values)
            }
        }
    }

    /// Checks one INSERT as the store would, and keeps it. A row that gives a list's items is
    /// refused: prepared rows hold single values.
    public mutating func add(_ identity: Value, _ given: PropertyValues) throws {
        let id: Value
        do {
            let lists: [(Property, [Value])]
            (id, _, lists) = try typing.check(type.name, identity, given, schema: schema)
            if let (p, _) = lists.first { throw RealmAdapterError.notASingleValue(type: type.name, property: p.name) }
        } catch {
            typing.clearRow()
            throw error
        }
        keepRow(id)
    }

    /// Keeps the row `receiver` holds (while it hands it on): checked as it was received.
    mutating func add(_ receiver: FieldReceiver) {
        assert(receiver.typing.type == type, "a row of another type")
        let key = typing.primaryKeySlot!
        record(idSize: receiver.encoded(key).count, valuesSize: receiver.encodedSize) { c, k in
            c.bytes(receiver.encoded(k < 0 ? key : k))
        }
    }

    /// Encodes the checked row in `typing`, and clears it for the next one.
    private mutating func keepRow(_ id: Value) {
        let row = typing.row
        defer { typing.clearRow() }
        record(idSize: ByteCursor.maximumSize(id), valuesSize: row.reduce(0) { $0 + ByteCursor.maximumSize($1!) }) {
            c, k in
            c.value(k < 0 ? id : row[k]!)
        }
    }

    /// Appends a record: `value(c, k)` writes slot k's value (k = -1: the identity), in at most
    /// the sizes given. The first record names the properties; the others say "the same".
    private mutating func record(idSize: Int, valuesSize: Int, _ value: (inout ByteCursor, Int) -> Void) {
        let start = typing.recordStart
        let width = typing.slotNames.count
        let same = count > 0
        let namesSize = same ? 0 : typing.slotNames.reduce(0) { $0 + ByteCursor.maximumSize($1) }
        encoded.write(maximum: start.count + idSize + ByteCursor.varintSize + 1 + namesSize + valuesSize) { c in
            c.bytes(start)
            value(&c, -1)
            c.varint(UInt64(width))
            c.byte(same ? 1 : 0)
            for k in 0..<width {
                if !same { c.string(typing.slotNames[k]) }
                value(&c, k)
            }
        }
        count += 1
    }
}
