import Foundation
import RealmAdapter

/// Rows in `COPY … TO STDOUT (FORMAT binary)`: the loader's read. Binary is cheaper than text
/// at both ends (the server formats no numbers, dates or UUIDs, and nothing is escaped or
/// parsed here), so the types with a binary form listed in ``PostgresType/hasBinaryForm`` are
/// read as they are and every other column is selected as `::text` and decoded as text.
///
/// Each CopyData message is one row: a 16-bit field count, then per field a 32-bit length
/// (-1 for NULL) and that many bytes. The first message starts with the file header; the last
/// is the trailer, a field count of -1.
enum PostgresCopyBinary {
    static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 13, 10, 0]

    /// Calls `field(i, bytes)` for each field of the row in `message` (nil for NULL; the bytes
    /// are valid only during the call). Returns false for the trailer.
    /// - Parameter first: the first message of the copy (it carries the header).
    static func fields(
        _ message: UnsafeBufferPointer<UInt8>, first: Bool, _ field: (Int, UnsafeBufferPointer<UInt8>?) throws -> Void
    ) throws -> Bool {
        var reader = Reader(bytes: message)
        if first {
            guard message.count >= 19, signature.indices.allSatisfy({ message[$0] == signature[$0] }) else {
                throw PostgresError.copyMalformed("no binary header")
            }
            reader.offset = 15  // signature, flags
            let extensions = try Int(reader.int32())
            guard extensions >= 0 else { throw PostgresError.copyMalformed("a malformed binary header") }
            reader.offset += extensions
        }
        let count = try reader.int16()
        if count == -1 { return false }
        guard count >= 0 else {
            throw PostgresError.copyMalformed("a binary row with a negative field count")
        }
        for i in 0..<Int(count) {
            let length = try reader.int32()
            if length == -1 {
                try field(i, nil)
                continue
            }
            try field(i, try reader.bytes(Int(length)))
        }
        guard reader.offset == message.count else {
            throw PostgresError.copyMalformed("a binary row of unexpected length")
        }
        return true
    }

    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        mutating func bytes(_ n: Int) throws -> UnsafeBufferPointer<UInt8> {
            guard n >= 0, offset + n <= bytes.count else {
                throw PostgresError.copyMalformed("a truncated binary row")
            }
            defer { offset += n }
            return UnsafeBufferPointer(rebasing: bytes[offset..<(offset + n)])
        }

        mutating func int16() throws -> Int16 { Int16(truncatingIfNeeded: try PostgresType.bigEndian(bytes(2))) }
        mutating func int32() throws -> Int32 { Int32(truncatingIfNeeded: try PostgresType.bigEndian(bytes(4))) }
    }
}

extension PostgresType {
    /// Types read in binary: those whose binary form is fixed and simple. The others (numeric,
    /// arrays, JSON, intervals, custom types, …) are read as text.
    var hasBinaryForm: Bool {
        switch oid {
        case 16, 21, 23, 20, 26, 700, 701, 25, 1043, 1042, 19, 17, 2950, 1082, 1114, 1184: true
        default: false
        }
    }

    /// A value from its binary form (`hasBinaryForm` types only).
    /// - Throws: `invalidValue` naming the type, never the value.
    func decode(binary b: UnsafeBufferPointer<UInt8>) throws -> Value { try BinaryField(oid: oid).value(b) }

    /// Days from 1970-01-01 to 2000-01-01, Postgres's epoch.
    static let postgresEpochDays: Int64 = 10_957

    /// An unsigned big-endian integer of up to 8 bytes.
    static func bigEndian(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var v: UInt64 = 0
        for byte in b { v = v << 8 | UInt64(byte) }
        return v
    }
}

/// Reads one field in the binary form of a built-in type, by OID only: the loader's per-field
/// path copies nothing (a ``PostgresType`` carries its name).
struct BinaryField {
    let oid: UInt32

    /// The type's name, for errors.
    var name: String { PostgresType.builtins[oid]?.0 ?? "oid \(oid)" }

    /// A field as a value (``PostgresType/decode(binary:)``).
    func value(_ b: UnsafeBufferPointer<UInt8>) throws -> Value {
        switch oid {
        case 16: return .bool(try bool(b))
        case 21, 23, 26, 20: return .int(try integer(b))
        case 700: return .float(try float(b))
        case 701: return .double(try double(b))
        case 25, 1043, 1042, 19: return .string(String(decoding: b, as: UTF8.self))
        case 17: return .data(Data(b))
        case 2950: return .uuid(UUID(uuid: try uuid(b)))
        case 1082, 1114, 1184: return .date(try timestamp(b))
        default: throw RealmAdapterError.invalidValue("a \(name) value has no binary form realm-adapter reads")
        }
    }

    /// The same handed to `receiver` at `column`, typed (no ``Value`` where it need not be one).
    func write(_ b: UnsafeBufferPointer<UInt8>, to receiver: FieldReceiver, at column: Int) throws {
        switch oid {
        case 16: try receiver.bool(try bool(b), at: column)
        case 21, 23, 26, 20: try receiver.int(try integer(b), at: column)
        case 700: try receiver.float(try float(b), at: column)
        case 701: try receiver.double(try double(b), at: column)
        case 25, 1043, 1042, 19: try receiver.text(UnsafeRawBufferPointer(b), at: column)
        case 17: try receiver.data(UnsafeRawBufferPointer(b), at: column)
        case 2950: try receiver.uuid(try uuid(b), at: column)
        case 1082, 1114, 1184: try receiver.date(try timestamp(b), at: column)
        default: throw RealmAdapterError.invalidValue("a \(name) value has no binary form realm-adapter reads")
        }
    }

    func size(_ b: UnsafeBufferPointer<UInt8>, _ n: Int) throws {
        guard b.count == n else {
            throw RealmAdapterError.invalidValue("a \(name) value has \(b.count) bytes in binary form, expected \(n)")
        }
    }

    func bool(_ b: UnsafeBufferPointer<UInt8>) throws -> Bool {
        try size(b, 1)
        return b[0] != 0
    }

    /// int2, int4, oid (unsigned) and int8.
    func integer(_ b: UnsafeBufferPointer<UInt8>) throws -> Int64 {
        switch oid {
        case 21:
            try size(b, 2)
            return Int64(Int16(truncatingIfNeeded: PostgresType.bigEndian(b)))
        case 23:
            try size(b, 4)
            return Int64(Int32(truncatingIfNeeded: PostgresType.bigEndian(b)))
        case 26:
            try size(b, 4)
            return Int64(UInt32(truncatingIfNeeded: PostgresType.bigEndian(b)))
        default:
            try size(b, 8)
            return Int64(bitPattern: PostgresType.bigEndian(b))
        }
    }

    func float(_ b: UnsafeBufferPointer<UInt8>) throws -> Float {
        try size(b, 4)
        return Float(bitPattern: UInt32(truncatingIfNeeded: PostgresType.bigEndian(b)))
    }

    func double(_ b: UnsafeBufferPointer<UInt8>) throws -> Double {
        try size(b, 8)
        return Double(bitPattern: PostgresType.bigEndian(b))
    }

    func uuid(_ b: UnsafeBufferPointer<UInt8>) throws -> uuid_t {
        try size(b, 16)
        return UnsafeRawBufferPointer(b).loadUnaligned(as: uuid_t.self)
    }

    /// date (days since 2000-01-01), timestamp and timestamptz (microseconds since then, UTC for
    /// timestamptz); the extremes are ±infinity, which cannot be stored.
    func timestamp(_ b: UnsafeBufferPointer<UInt8>) throws -> Timestamp {
        if oid == 1082 {
            try size(b, 4)
            let days = Int32(truncatingIfNeeded: PostgresType.bigEndian(b))
            guard days != .max && days != .min else {
                throw RealmAdapterError.invalidValue("a \(name) value is infinity, which cannot be stored")
            }
            return try storable(Timestamp(seconds: (Int64(days) + PostgresType.postgresEpochDays) * 86_400))
        }
        try size(b, 8)
        let micros = Int64(bitPattern: PostgresType.bigEndian(b))
        guard micros != .max && micros != .min else {
            throw RealmAdapterError.invalidValue("a \(name) value is infinity, which cannot be stored")
        }
        let (seconds, rest) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        return try storable(
            Timestamp(seconds: seconds + PostgresType.postgresEpochDays * 86_400, nanoseconds: Int32(rest * 1000)))
    }

    /// `t`, if a Realm can hold it.
    private func storable(_ t: Timestamp) throws -> Timestamp {
        guard t.isStorable else { throw RealmAdapterError.dateOutOfRange("a \(name) value") }
        return t
    }
}
