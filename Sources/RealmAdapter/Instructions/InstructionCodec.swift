import Foundation

/// The compact binary form in which the store keeps a transaction's instructions.
///
/// History is read far more often than written (every adapter replays it), and JSON decoding
/// would cap replay at a few hundred thousand instructions per second; this format decodes
/// several million. It is private to the store: the public, stable form is the JSON one.
/// Layout: a format byte, the instruction count, then each instruction as a tag byte and its
/// fields (varints, length-prefixed UTF-8, tagged values). Schema instructions are written field
/// by field too (tags 12 and 13: per-user Realms each record their types in their first
/// transaction); the JSON ones of earlier releases (tags 9 and 10) are still read.
enum InstructionCodec {
    static let formatVersion: UInt8 = 2

    static func encode(_ instructions: [Instruction]) -> [UInt8] {
        var w = BinaryWriter()
        w.bytes.reserveCapacity(instructions.count * 32)
        w.byte(formatVersion)
        w.varint(UInt64(instructions.count))
        for i in instructions { w.instruction(i) }
        return w.bytes
    }

    /// `instructions` with INSERTs encoded ahead (``PreparedInserts``) spliced in before the
    /// instruction at each segment's index (or at the end).
    static func encode(_ instructions: [Instruction], prepared: [(at: Int, encoded: BinaryWriter, count: Int)])
        -> [UInt8]
    {
        guard !prepared.isEmpty else { return encode(instructions) }
        var w = BinaryWriter()
        w.bytes.reserveCapacity(prepared.reduce(instructions.count * 32) { $0 + $1.encoded.bytes.count })
        w.byte(formatVersion)
        w.varint(UInt64(prepared.reduce(instructions.count) { $0 + $1.count }))
        var next = 0
        func splice(upTo i: Int) {
            while next < prepared.count && prepared[next].at <= i {
                w.bytes.append(contentsOf: prepared[next].encoded.bytes)
                w.forgetNames()  // the reader now holds the segment's last names
                next += 1
            }
        }
        for (i, instruction) in instructions.enumerated() {
            splice(upTo: i)
            w.instruction(instruction)
        }
        splice(upTo: Int.max)
        return w.bytes
    }

    static func decode(_ data: [UInt8]) throws -> [Instruction] {
        try data.withUnsafeBytes { buffer in
            var r = BinaryReader(buffer: buffer)
            guard try r.byte() == formatVersion else { throw BinaryReader.corrupt }
            let n = Int(try r.varint())
            var out: [Instruction] = []
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(try r.instruction()) }
            return out
        }
    }
}

struct BinaryWriter {
    var bytes: [UInt8] = []
    /// The property names of the previous INSERT/SET: a bulk load repeats them on every row,
    /// so an identical list is written as one byte instead (about a third of a row's bytes).
    /// Nil when unknown (nothing written yet, or bytes written by another writer since).
    private var lastNames: [String]?

    mutating func forgetNames() { lastNames = nil }

    /// Appends what `body` writes, at most `maximum` bytes, in one piece: appending a record
    /// byte by byte cost a bulk load more than encoding it.
    mutating func write(maximum: Int, _ body: (inout ByteCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximum) { buffer in
            var cursor = ByteCursor(start: buffer.baseAddress!)
            body(&cursor)
            assert(cursor.count <= maximum, "a record outgrew the room made for it")
            bytes.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: cursor.count))
        }
    }

    mutating func byte(_ b: UInt8) { bytes.append(b) }
    mutating func varint(_ v: UInt64) { write(maximum: ByteCursor.varintSize) { $0.varint(v) } }
    mutating func string(_ s: String) { write(maximum: ByteCursor.maximumSize(s)) { $0.string(s) } }
    mutating func value(_ v: Value) { write(maximum: ByteCursor.maximumSize(v)) { $0.value(v) } }

    /// An INSERT (`tag` 1) or a SET (2), in one piece, without building the instruction first
    /// (a bulk load's hot path).
    mutating func insert(_ type: String, _ id: Value, _ v: PropertyValues) { record(1, type, id, v) }

    private mutating func record(_ tag: UInt8, _ type: String, _ id: Value, _ v: PropertyValues) {
        v.entries.withUnsafeBufferPointer { entries in
            var same = entries.count == lastNames?.count
            if same, let last = lastNames {
                for k in entries.indices where entries[k].name != last[k] {
                    same = false
                    break
                }
            }
            if !same { lastNames = entries.map(\.name) }
            var maximum = 1 + ByteCursor.maximumSize(type) + ByteCursor.maximumSize(id) + ByteCursor.varintSize + 1
            for k in entries.indices {
                maximum +=
                    (same ? 0 : ByteCursor.maximumSize(entries[k].name)) + ByteCursor.maximumSize(entries[k].value)
            }
            write(maximum: maximum) { c in
                c.byte(tag)
                c.string(type)
                c.value(id)
                c.varint(UInt64(entries.count))
                c.byte(same ? 1 : 0)
                for k in entries.indices {
                    if !same { c.string(entries[k].name) }
                    c.value(entries[k].value)
                }
            }
        }
    }

    mutating func optional(_ s: String?) {
        guard let s else { return byte(0) }
        byte(1)
        string(s)
    }

    mutating func property(_ p: Property) {
        string(p.name)
        switch p.type {
        case .scalar(let t):
            byte(0)
            byte(Self.code(t))
        case .link(let t):
            byte(1)
            string(t)
        case .list(.scalar(let t)):
            byte(2)
            byte(Self.code(t))
        case .list(.link(let t)):
            byte(3)
            string(t)
        case .linkingObjects(let t, let q):
            byte(4)
            string(t)
            string(q)
        }
        byte((p.isOptional ? 1 : 0) | (p.isIndexed ? 2 : 0) | (p.watchTable ? 4 : 0) | (p.defaultValue == nil ? 0 : 8))
        // In its JSON form: a default read back from history is what the schema's JSON gives.
        if let d = p.defaultValue { string(d.json.serialized()) }
    }

    static func code(_ t: ScalarType) -> UInt8 { UInt8(ScalarType.allCases.firstIndex(of: t)!) }

    mutating func instruction(_ i: Instruction) {
        switch i {
        case .insert(let t, let id, let v): record(1, t, id, v)
        case .set(let t, let id, let v): record(2, t, id, v)
        case .delete(let t, let id):
            byte(3)
            string(t)
            value(id)
        case .clear(let t):
            byte(4)
            string(t)
        case .listSet(let t, let id, let p, let n, let v):
            byte(5)
            string(t)
            value(id)
            string(p)
            varint(UInt64(n))
            value(v)
        case .listInsert(let t, let id, let p, let n, let v):
            byte(6)
            string(t)
            value(id)
            string(p)
            varint(UInt64(n))
            value(v)
        case .listErase(let t, let id, let p, let n):
            byte(7)
            string(t)
            value(id)
            string(p)
            varint(UInt64(n))
        case .listClear(let t, let id, let p):
            byte(8)
            string(t)
            value(id)
            string(p)
        case .addType(let s):
            byte(12)
            string(s.name)
            optional(s.primaryKey)
            optional(s.databasePrimaryKey)
            varint(UInt64(s.properties.count))
            for p in s.properties { property(p) }
        case .addProperties(let t, let props):
            byte(13)
            string(t)
            varint(UInt64(props.count))
            for p in props { property(p) }
        case .changeIdentity(let t, let id, let new):
            byte(11)
            string(t)
            value(id)
            value(new)
        }
    }
}

/// Writes the binary form through a pointer, into room that ``BinaryWriter`` made for at most
/// `maximumSize` bytes.
struct ByteCursor {
    let start: UnsafeMutablePointer<UInt8>
    private(set) var count = 0

    init(start: UnsafeMutablePointer<UInt8>) { self.start = start }

    static let varintSize = 10
    static func maximumSize(_ s: String) -> Int { varintSize + s.utf8.count }

    static func maximumSize(_ v: Value) -> Int {
        switch v {
        case .null, .bool: 1
        case .int, .date: 1 + 2 * varintSize
        case .float, .double: 9
        case .string(let s): 1 + maximumSize(s)
        case .data(let d): 1 + varintSize + d.count
        case .decimal(let d): 1 + maximumSize(d.description)
        case .uuid: 17
        case .objectId(let o): 1 + o.bytes.count
        case .list(let l): l.reduce(1 + varintSize) { $0 + maximumSize($1) }
        }
    }

    mutating func byte(_ b: UInt8) {
        start[count] = b
        count += 1
    }

    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            byte(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        byte(UInt8(v))
    }

    mutating func signed(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    mutating func raw<T: FixedWidthInteger>(_ v: T) {
        UnsafeMutableRawPointer(start + count).storeBytes(of: v.littleEndian, as: T.self)
        count += MemoryLayout<T>.size
    }

    mutating func bytes(_ b: UnsafeRawBufferPointer) {
        guard let base = b.baseAddress else { return }
        (start + count).initialize(from: base.assumingMemoryBound(to: UInt8.self), count: b.count)
        count += b.count
    }

    mutating func string(_ s: String) {
        func write(_ u: UnsafeBufferPointer<UInt8>) {
            varint(UInt64(u.count))
            bytes(UnsafeRawBufferPointer(u))
        }
        // Native strings lend their bytes; others are made contiguous in a copy.
        if s.utf8.withContiguousStorageIfAvailable(write) == nil {
            var copy = s
            copy.withUTF8(write)
        }
    }

    mutating func value(_ v: Value) {
        switch v {
        case .null: byte(0)
        case .bool(let b): byte(b ? 2 : 1)
        case .int(let i):
            byte(3)
            signed(i)
        case .float(let f):
            byte(4)
            raw(f.bitPattern)
        case .double(let d):
            byte(5)
            raw(d.bitPattern)
        case .string(let s):
            byte(6)
            string(s)
        case .data(let d):
            byte(7)
            varint(UInt64(d.count))
            d.withUnsafeBytes { bytes($0) }
        case .date(let t):
            byte(8)
            signed(t.seconds)
            varint(UInt64(t.nanoseconds))
        case .decimal(let d):
            byte(9)
            string(d.description)
        case .uuid(let u):
            byte(10)
            withUnsafeBytes(of: u.uuid) { bytes($0) }
        case .objectId(let o):
            byte(11)
            o.bytes.withUnsafeBytes { bytes($0) }
        case .list(let l):
            byte(12)
            varint(UInt64(l.count))
            for e in l { value(e) }
        }
    }
}

package struct BinaryReader {
    static let corrupt = RealmAdapterError(
        .storeUnavailable, "A history record is corrupt or was written by a newer version of realm-adapter.")

    let buffer: UnsafeRawBufferPointer
    var i = 0
    private var lastNames: [String] = []

    init(buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    @inline(__always)
    mutating func byte() throws -> UInt8 {
        guard i < buffer.count else { throw Self.corrupt }
        defer { i += 1 }
        return buffer[i]
    }

    @inline(__always)
    mutating func varint() throws -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
            guard shift < 64 else { throw Self.corrupt }
        }
    }

    @inline(__always)
    mutating func signed() throws -> Int64 {
        let u = try varint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    @inline(__always)
    mutating func take(_ n: Int) throws -> UnsafeRawBufferPointer {
        guard n >= 0, i + n <= buffer.count else { throw Self.corrupt }
        defer { i += n }
        return UnsafeRawBufferPointer(rebasing: buffer[i..<(i + n)])
    }

    mutating func string() throws -> String {
        let b = try take(Int(try varint()))
        return String(decoding: b, as: UTF8.self)
    }

    mutating func skipString() throws { _ = try take(Int(try varint())) }

    /// Moves past a value without decoding it.
    mutating func skipValue() throws {
        switch try byte() {
        case 0, 1, 2: break
        case 3: _ = try varint()
        case 4: _ = try take(4)
        case 5: _ = try take(8)
        case 6, 7, 9: try skipString()
        case 8:
            _ = try varint()
            _ = try varint()
        case 10: _ = try take(16)
        case 11: _ = try take(12)
        case 12: for _ in 0..<(try varint()) { try skipValue() }
        default: throw Self.corrupt
        }
    }

    @inline(__always)
    mutating func raw<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let b = try take(MemoryLayout<T>.size)
        return T(littleEndian: b.loadUnaligned(as: T.self))
    }

    package mutating func value() throws -> Value {
        switch try byte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(try signed())
        case 4: return .float(Float(bitPattern: try raw(UInt32.self)))
        case 5: return .double(Double(bitPattern: try raw(UInt64.self)))
        case 6: return .string(try string())
        case 7: return .data(Data(try take(Int(try varint()))))
        case 8:
            let s = try signed()
            return .date(Timestamp(seconds: s, nanoseconds: Int32(try varint())))
        case 9:
            guard let d = DecimalNumber(exactly: try string()) else { throw Self.corrupt }
            return .decimal(d)
        case 10:
            let b = try take(16)
            return .uuid(UUID(uuid: b.loadUnaligned(as: uuid_t.self)))
        case 11: return .objectId(ObjectId(bytes: Array(try take(12)))!)
        case 12:
            let n = Int(try varint())
            var l: [Value] = []
            l.reserveCapacity(n)
            for _ in 0..<n { l.append(try value()) }
            return .list(l)
        default: throw Self.corrupt
        }
    }

    mutating func values() throws -> PropertyValues {
        let n = Int(try varint())
        let same = try byte() == 1
        guard !same || n == lastNames.count else { throw Self.corrupt }
        var entries: [PropertyValues.Entry] = []
        entries.reserveCapacity(n)
        for k in 0..<n { entries.append(.init(same ? lastNames[k] : try string(), try value())) }
        if !same { lastNames = entries.map(\.name) }
        return PropertyValues(entries)
    }

    mutating func instruction() throws -> Instruction {
        switch try byte() {
        case 1: return .insert(objectType: try string(), identity: try value(), values: try values())
        case 2: return .set(objectType: try string(), identity: try value(), values: try values())
        case 3: return .delete(objectType: try string(), identity: try value())
        case 4: return .clear(objectType: try string())
        case 5:
            return .listSet(
                objectType: try string(), identity: try value(), property: try string(), index: Int(try varint()),
                value: try value())
        case 6:
            return .listInsert(
                objectType: try string(), identity: try value(), property: try string(), index: Int(try varint()),
                value: try value())
        case 7:
            return .listErase(
                objectType: try string(), identity: try value(), property: try string(), index: Int(try varint()))
        case 8: return .listClear(objectType: try string(), identity: try value(), property: try string())
        case 9: return .addType(try ObjectSchema(json: try JSONValue(parsing: try string()), path: "history"))
        case 10:
            let t = try string()
            let o = try JSONObjectReader(try JSONValue(parsing: try string()), path: "history", code: .storeUnavailable)
            return .addProperties(
                objectType: t,
                properties: try o.members.map { try Property(name: $0.key, json: $0.value, path: "history") })
        case 11: return .changeIdentity(objectType: try string(), identity: try value(), newIdentity: try value())
        case 12:
            let (name, primaryKey, databasePrimaryKey) = (try string(), try optionalString(), try optionalString())
            return .addType(
                ObjectSchema(
                    name: name, primaryKey: primaryKey, databasePrimaryKey: databasePrimaryKey,
                    properties: try properties()))
        case 13: return .addProperties(objectType: try string(), properties: try properties())
        default: throw Self.corrupt
        }
    }

    mutating func optionalString() throws -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        default: throw Self.corrupt
        }
    }

    mutating func properties() throws -> [Property] {
        var out: [Property] = []
        guard let n = Int(exactly: try varint()) else { throw Self.corrupt }
        for _ in 0..<n { out.append(try property()) }  // a false count runs out of bytes
        return out
    }

    mutating func property() throws -> Property {
        let name = try string()
        func scalar() throws -> ScalarType {
            let k = Int(try byte())
            guard k < ScalarType.allCases.count else { throw Self.corrupt }
            return ScalarType.allCases[k]
        }
        let type: PropertyType
        switch try byte() {
        case 0: type = .scalar(try scalar())
        case 1: type = .link(try string())
        case 2: type = .list(.scalar(try scalar()))
        case 3: type = .list(.link(try string()))
        case 4: type = .linkingObjects(objectType: try string(), property: try string())
        default: throw Self.corrupt
        }
        let flags = try byte()
        guard flags < 16 else { throw Self.corrupt }
        var defaultValue: Value?  // not `nil` in an expression: that would be a Value, `.null`
        if flags & 8 != 0 {
            defaultValue = try Value(json: try JSONValue(parsing: try string(), errorCode: .storeUnavailable))
        }
        return Property(
            name: name, type: type, isOptional: flags & 1 != 0, isIndexed: flags & 2 != 0,
            defaultValue: defaultValue, watchTable: flags & 4 != 0)
    }
}
