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
    static func fields(_ message: UnsafeBufferPointer<UInt8>, first: Bool, _ field: (Int, UnsafeBufferPointer<UInt8>?) throws -> Void) throws -> Bool {
        var reader = Reader(bytes: message)
        if first {
            guard message.count >= 19, signature.indices.allSatisfy({ message[$0] == signature[$0] }) else {
                throw PostgresError(.queryFailed, "COPY sent no binary header.")
            }
            reader.offset = 15  // signature, flags
            let extensions = try Int(reader.int32())
            guard extensions >= 0 else { throw PostgresError(.queryFailed, "COPY sent a malformed binary header.") }
            reader.offset += extensions
        }
        let count = try reader.int16()
        if count == -1 { return false }
        for i in 0..<Int(count) {
            let length = try reader.int32()
            if length == -1 { try field(i, nil); continue }
            try field(i, try reader.bytes(Int(length)))
        }
        guard reader.offset == message.count else { throw PostgresError(.queryFailed, "COPY sent a binary row of unexpected length.") }
        return true
    }

    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        mutating func bytes(_ n: Int) throws -> UnsafeBufferPointer<UInt8> {
            guard n >= 0, offset + n <= bytes.count else { throw PostgresError(.queryFailed, "COPY sent a truncated binary row.") }
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
    func decode(binary b: UnsafeBufferPointer<UInt8>) throws -> Value {
        func size(_ n: Int) throws {
            guard b.count == n else { throw RealmAdapterError(.invalidValue, "a \(name) value has \(b.count) bytes in binary form, expected \(n)") }
        }
        switch oid {
        case 16:
            try size(1)
            return .bool(b[0] != 0)
        case 21:
            try size(2)
            return .int(Int64(Int16(truncatingIfNeeded: Self.bigEndian(b))))
        case 23:
            try size(4)
            return .int(Int64(Int32(truncatingIfNeeded: Self.bigEndian(b))))
        case 26:
            try size(4)
            return .int(Int64(UInt32(truncatingIfNeeded: Self.bigEndian(b))))
        case 20:
            try size(8)
            return .int(Int64(bitPattern: Self.bigEndian(b)))
        case 700:
            try size(4)
            return .float(Float(bitPattern: UInt32(truncatingIfNeeded: Self.bigEndian(b))))
        case 701:
            try size(8)
            return .double(Double(bitPattern: Self.bigEndian(b)))
        case 25, 1043, 1042, 19:
            return .string(String(decoding: b, as: UTF8.self))
        case 17:
            return .data(Data(b))
        case 2950:
            try size(16)
            return .uuid(UUID(uuid: UnsafeRawBufferPointer(b).loadUnaligned(as: uuid_t.self)))
        case 1082:
            // Days since 2000-01-01; the extremes are ±infinity.
            try size(4)
            let days = Int32(truncatingIfNeeded: Self.bigEndian(b))
            guard days != .max && days != .min else { throw RealmAdapterError(.invalidValue, "a \(name) value is infinity, which cannot be stored") }
            return .date(Timestamp(seconds: (Int64(days) + Self.postgresEpochDays) * 86_400))
        case 1114, 1184:
            // Microseconds since 2000-01-01 (UTC for timestamptz); the extremes are ±infinity.
            try size(8)
            let micros = Int64(bitPattern: Self.bigEndian(b))
            guard micros != .max && micros != .min else { throw RealmAdapterError(.invalidValue, "a \(name) value is infinity, which cannot be stored") }
            let (seconds, rest) = micros.quotientAndRemainder(dividingBy: 1_000_000)
            return .date(Timestamp(seconds: seconds + Self.postgresEpochDays * 86_400, nanoseconds: Int32(rest * 1000)))
        default:
            throw RealmAdapterError(.invalidValue, "a \(name) value has no binary form realm-adapter reads")
        }
    }

    /// Days from 1970-01-01 to 2000-01-01, Postgres's epoch.
    static let postgresEpochDays: Int64 = 10_957

    /// An unsigned big-endian integer of up to 8 bytes.
    static func bigEndian(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var v: UInt64 = 0
        for byte in b { v = v << 8 | UInt64(byte) }
        return v
    }
}
