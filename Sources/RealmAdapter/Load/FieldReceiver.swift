import Foundation

/// Receives a table's rows field by field, typed as the connector reads them
/// (``LoadSnapshot/rows(_:columns:orderedBy:into:)``), and makes each row a prepared INSERT
/// (``PreparedInserts``): the loader's path for types whose rows alone give their identity.
///
/// A field whose column maps, without a converter, to a property of the type it is read as is
/// written straight into the form history keeps (and the store binds from): no ``Value`` is
/// made for it. Every other field (NULLs, converted or coerced columns, the columns a path
/// template reads) is given as a ``Value`` and goes through the mapping engine as in the
/// daemon, when the row ends; so do the properties no column fills (their defaults).
///
/// Used by one thread at a time: the connector calls the field methods for each column of a
/// row, in any order, then ``endRow()``.
public final class FieldReceiver {
    let t: TableMapping
    let mapping: Mapping
    let typing: InsertTyping
    private let typeName: String
    /// The columns the connector reads, in the order it is given them.
    private let columns: [String]
    /// Per requested column: the slot it fills, or nil (a column only the path template reads).
    private let slotOfColumn: [Int?]
    /// Per requested column: its index in `t.columns`, or nil.
    private let mappingIndex: [Int?]
    /// Per requested column: the type whose fields are written as they come, or nil (always a Value).
    private let direct: [ScalarType?]
    /// Per slot: the requested column that fills it, or nil.
    private let columnOfSlot: [Int?]
    private let keySlot: Int
    /// The Realm of every row, unless a path template routes them.
    private let literalPath: String?
    /// The last routed row's routing values and path (``route()``).
    private var lastRoute: (values: [Value?], path: String)?
    /// Called at the end of each row with the Realm it is for; the row is readable during the call.
    private let onRow: (String, FieldReceiver) throws -> Void

    // The row being received.
    /// Encoded slot values, one after another; `starts[k]`/`ends[k]` delimit slot k's (-1: not yet).
    private var bytes: UnsafeMutableRawPointer
    private var capacity = 1024
    private var used = 0
    private let starts: UnsafeMutableBufferPointer<Int>
    private let ends: UnsafeMutableBufferPointer<Int>
    /// Per requested column: the value given as a Value, if it was; `givenColumns` lists them.
    private let given: UnsafeMutableBufferPointer<Value?>
    private var givenColumns: [Int] = []

    /// - Parameters:
    ///   - columns: the columns the connector reads, in the order it is given them
    ///     (every column of `t`'s single-value properties and the path template's).
    ///   - onRow: called at the end of each row with the path of the Realm it is for and this
    ///     receiver, whose row is readable (``identity``, ``encoded(_:)``, ``mappedValues``) during the call.
    init(
        _ t: TableMapping, columns: [String], mapping: Mapping, onRow: @escaping (String, FieldReceiver) throws -> Void
    ) throws {
        self.t = t
        self.mapping = mapping
        typing = try InsertTyping(t.type, schema: mapping.schema)
        typeName = t.type.name
        precondition(
            PreparedInserts.canPrepare(t.type) && !t.rowsGiveLists && t.compoundKey == nil && t.databaseKey == nil,
            "FieldReceiver needs a type whose rows give their identity and single values only")
        let routing = Set(mapping.path.isLiteral ? [] : mapping.path.fields)
        literalPath = mapping.path.isLiteral ? mapping.path.template : nil
        self.columns = columns
        let typing = self.typing
        let mappingIndex = columns.map { c in t.columns.firstIndex { $0.column == c } }
        let slotOfColumn = mappingIndex.map { i in i.flatMap { typing.slots[t.columns[$0].property.name] } }
        self.mappingIndex = mappingIndex
        self.slotOfColumn = slotOfColumn
        direct = zip(columns, mappingIndex).map { c, i in
            routing.contains(c) ? nil : i.flatMap { Self.directType(t.columns[$0]) }
        }
        columnOfSlot = typing.slotNames.indices.map { k in slotOfColumn.firstIndex(of: k) }
        keySlot = typing.primaryKeySlot!
        guard columnOfSlot[keySlot] != nil else { preconditionFailure("the key column \(t.keyColumn) must be read") }
        self.onRow = onRow
        bytes = .allocate(byteCount: capacity, alignment: 8)
        starts = .allocate(capacity: typing.slotNames.count)
        starts.initialize(repeating: -1)
        ends = .allocate(capacity: typing.slotNames.count)
        ends.initialize(repeating: -1)
        given = .allocate(capacity: columns.count)
        given.initialize(repeating: nil)
    }

    /// The type a column's fields are written as they come in: a plain scalar's, or a link's
    /// target key (the loader prepares no type whose links go through a database key).
    private static func directType(_ c: ColumnMapping) -> ScalarType? {
        if let s = c.plainScalar { return s }
        if case .link(_, let keyType) = c.kind { return keyType }
        return nil
    }

    deinit {
        bytes.deallocate()
        starts.deallocate()
        ends.deallocate()
        given.deinitialize()
        given.deallocate()
    }

    // MARK: Fields

    public func int(_ v: Int64, at column: Int) throws {
        guard direct[column] == .int else { return try value(.int(v), at: column) }
        write(column, maximum: 1 + ByteCursor.varintSize) {
            $0.byte(3)
            $0.signed(v)
        }
    }

    public func double(_ v: Double, at column: Int) throws {
        guard direct[column] == .double else { return try value(.double(v), at: column) }
        write(column, maximum: 9) {
            $0.byte(5)
            $0.raw(v.bitPattern)
        }
    }

    public func float(_ v: Float, at column: Int) throws {
        guard direct[column] == .float else { return try value(.float(v), at: column) }
        write(column, maximum: 5) {
            $0.byte(4)
            $0.raw(v.bitPattern)
        }
    }

    public func bool(_ v: Bool, at column: Int) throws {
        guard direct[column] == .bool else { return try value(.bool(v), at: column) }
        write(column, maximum: 1) { $0.byte(v ? 2 : 1) }
    }

    /// Text as UTF-8 (valid UTF-8 is kept as it is; anything else is repaired as `String` does).
    public func text(_ utf8: UnsafeRawBufferPointer, at column: Int) throws {
        guard direct[column] == .string, Self.isASCII(utf8) else {
            return try value(.string(String(decoding: utf8, as: UTF8.self)), at: column)
        }
        write(column, maximum: 1 + ByteCursor.varintSize + utf8.count) { c in
            c.byte(6)
            c.varint(UInt64(utf8.count))
            c.bytes(utf8)
        }
    }

    public func data(_ b: UnsafeRawBufferPointer, at column: Int) throws {
        guard direct[column] == .data else { return try value(.data(Data(b)), at: column) }
        write(column, maximum: 1 + ByteCursor.varintSize + b.count) { c in
            c.byte(7)
            c.varint(UInt64(b.count))
            c.bytes(b)
        }
    }

    public func date(_ t: Timestamp, at column: Int) throws {
        guard direct[column] == .date else { return try value(.date(t), at: column) }
        write(column, maximum: 1 + 2 * ByteCursor.varintSize) { c in
            c.byte(8)
            c.signed(t.seconds)
            c.varint(UInt64(t.nanoseconds))
        }
    }

    public func uuid(_ u: uuid_t, at column: Int) throws {
        guard direct[column] == .uuid else { return try value(.uuid(UUID(uuid: u)), at: column) }
        write(column, maximum: 17) { c in
            c.byte(10)
            withUnsafeBytes(of: u) { c.bytes($0) }
        }
    }

    /// Any other value, NULL included: mapped when the row ends.
    public func value(_ v: Value, at column: Int) throws {
        if let s = direct[column], v.has(s) {
            write(column, maximum: ByteCursor.maximumSize(v)) { $0.value(v) }
        } else {
            given[column] = v
            givenColumns.append(column)
        }
    }

    private static func isASCII(_ b: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i + 8 <= b.count {
            if b.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            i += 8
        }
        while i < b.count {
            if b[i] >= 0x80 { return false }
            i += 1
        }
        return true
    }

    /// Writes the encoded value of a column's slot, at most `maximum` bytes.
    private func write(_ column: Int, maximum: Int, _ body: (inout ByteCursor) -> Void) {
        guard let k = slotOfColumn[column] else { return }
        write(slot: k, maximum: maximum, body)
    }

    private func write(slot k: Int, maximum: Int, _ body: (inout ByteCursor) -> Void) {
        if capacity - used < maximum {
            capacity = max(capacity * 2, used + maximum)
            let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
            grown.copyMemory(from: bytes, byteCount: used)
            bytes.deallocate()
            bytes = grown
        }
        var c = ByteCursor(start: (bytes + used).assumingMemoryBound(to: UInt8.self))
        body(&c)
        starts[k] = used
        used += c.count
        ends[k] = used
    }

    // MARK: The end of a row

    /// Maps the fields given as values, fills the slots no column fills, and hands the row on.
    public func endRow() throws {
        defer { clear() }
        let n = typeName
        // The identity first: the key column's value, as `Mapping.key` makes it.
        var id: Value?
        if starts[keySlot] < 0 {
            let j = columnOfSlot[keySlot]!
            let key = try mapping.key(given[j], t)
            let typed = try typing.identity(n, key)
            write(slot: keySlot, maximum: ByteCursor.maximumSize(typed)) { $0.value(typed) }
            id = typed
        }
        for k in starts.indices where starts[k] < 0 {
            let v: Value
            if let j = columnOfSlot[k], let g = given[j] {
                if id == nil { id = identity }
                let mapped = try mapping.realmValue(g, column: mappingIndex[j]!, t, key: id!)
                do {
                    if let s = typing.slotScalars[k] {
                        v =
                            mapped.has(s) && mapped.isStorableAsIs
                            ? mapped : try mapped.coerced(to: s, optional: typing.slotOptional[k])
                    } else {
                        v = mapped  // a link: its target's key already (ColumnMapping.realmValue)
                    }
                } catch let e as RealmAdapterError {
                    throw e.inColumn(table: t.table, column: columns[j], key: id!)
                }
            } else if columnOfSlot[k] == nil {
                v = try typing.unmentioned(k, n)
            } else {
                throw RealmAdapterError.fieldMissing(table: t.table, column: columns[columnOfSlot[k]!])
            }
            write(slot: k, maximum: ByteCursor.maximumSize(v)) { $0.value(v) }
        }
        try onRow(try literalPath ?? route(), self)
    }

    /// The row's Realm. Rows come grouped by Realm (the loader reads a routed table in the order
    /// of its routing columns), so the last row's path is reused while its routing values repeat.
    private func route() throws -> String {
        let fields = RoutingFields(receiver: self)
        let values = mapping.path.fields.map { fields.value(column: $0) }
        if let last = lastRoute, last.values == values { return last.path }
        let path = try mapping.route(fields, t)
        lastRoute = (values, path)
        return path
    }

    private func clear() {
        used = 0
        for k in starts.indices { starts[k] = -1 }
        for j in givenColumns { given[j] = nil }
        givenColumns.removeAll(keepingCapacity: true)
    }

    // MARK: The row, while `onRow` runs

    /// The row's identity.
    var identity: Value { value(ofSlot: keySlot) }

    /// Slot k's value, decoded.
    private func value(ofSlot k: Int) -> Value {
        var r = BinaryReader(buffer: encoded(k))
        return (try? r.value()) ?? .null
    }

    /// The bytes of slot k's encoded value.
    func encoded(_ k: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes + starts[k], count: ends[k] - starts[k])
    }

    /// The bytes of all the row's encoded values.
    var encodedSize: Int { used }

    /// The values the row's columns give (not the defaults of properties no column fills), for
    /// a Realm that merges rows into what it has.
    var mappedValues: PropertyValues {
        var values = PropertyValues()
        for k in starts.indices where columnOfSlot[k] != nil { values.append(typing.slotNames[k], value(ofSlot: k)) }
        return values
    }

    /// The row's columns by name, for the path template.
    private struct RoutingFields: ColumnValues {
        let receiver: FieldReceiver
        func value(column: String) -> Value? {
            guard let j = receiver.columns.firstIndex(of: column) else { return nil }
            return receiver.given[j] ?? receiver.slotOfColumn[j].map(receiver.value(ofSlot:))
        }
        func value(at index: Int, of t: TableMapping) -> Value? { value(column: t.columns[index].column) }
    }
}
