import Foundation

/// Messages of the `pgoutput` logical decoding plugin, protocol version 1.
///
/// See the Postgres documentation, "Logical Replication Message Formats". Relation messages
/// describe a table before its first change in a session (and again after it changes); row
/// messages refer to it by OID. Column values arrive in text format.
public enum PgOutputMessage: Equatable, Sendable {
    case begin(finalLSN: LSN, commitTime: Int64, xid: UInt32)
    case commit(commitLSN: LSN, endLSN: LSN, commitTime: Int64)
    /// The transaction was written by a session with this replication origin.
    case origin(lsn: LSN, name: String)
    case relation(Relation)
    case type(oid: UInt32, namespace: String, name: String)
    case insert(relation: UInt32, new: [TupleValue])
    /// `old` is the key ('K', when the key changed) or the whole old row ('O', with REPLICA IDENTITY FULL).
    case update(relation: UInt32, old: [TupleValue]?, oldIsKeyOnly: Bool, new: [TupleValue])
    case delete(relation: UInt32, old: [TupleValue], oldIsKeyOnly: Bool)
    case truncate(relations: [UInt32], cascade: Bool, restartIdentity: Bool)
    /// A logical decoding message (`pg_logical_emit_message`; with the `messages` option).
    case message(transactional: Bool, lsn: LSN, prefix: String, content: [UInt8])
    /// Anything else this decoder skips.
    case other(UInt8)

    public struct Relation: Equatable, Sendable {
        public var oid: UInt32
        public var namespace: String
        public var name: String
        /// `d` default (primary key), `n` nothing, `f` full, `i` index.
        public var replicaIdentity: UInt8
        public var columns: [Column]
    }

    public struct Column: Equatable, Sendable {
        public var name: String
        public var typeOID: UInt32
        public var typeModifier: Int32
        /// Part of the replica identity (the key, by default).
        public var isKey: Bool
    }

    /// A column value in a row message.
    public enum TupleValue: Equatable, Sendable {
        case null
        /// A TOASTed value that did not change: the message does not carry it.
        case unchangedToast
        case text(String)
    }

    /// Decodes one message (the payload of an XLogData frame).
    public init(_ bytes: some Collection<UInt8>) throws {
        var r = ByteReader(Array(bytes))
        let tag = try r.uint8()
        switch tag {
        case UInt8(ascii: "B"):
            self = .begin(
                finalLSN: LSN(try r.uint64()), commitTime: Int64(bitPattern: try r.uint64()), xid: try r.uint32())
        case UInt8(ascii: "C"):
            _ = try r.uint8()
            self = .commit(
                commitLSN: LSN(try r.uint64()), endLSN: LSN(try r.uint64()),
                commitTime: Int64(bitPattern: try r.uint64()))
        case UInt8(ascii: "O"):
            self = .origin(lsn: LSN(try r.uint64()), name: try r.cString())
        case UInt8(ascii: "R"):
            let oid = try r.uint32()
            let ns = try r.cString()
            let name = try r.cString()
            let identity = try r.uint8()
            let n = Int(try r.uint16())
            var columns: [Column] = []
            for _ in 0..<n {
                let flags = try r.uint8()
                columns.append(
                    Column(
                        name: try r.cString(), typeOID: try r.uint32(), typeModifier: Int32(bitPattern: try r.uint32()),
                        isKey: flags & 1 == 1))
            }
            self = .relation(Relation(oid: oid, namespace: ns, name: name, replicaIdentity: identity, columns: columns))
        case UInt8(ascii: "Y"):
            self = .type(oid: try r.uint32(), namespace: try r.cString(), name: try r.cString())
        case UInt8(ascii: "I"):
            let rel = try r.uint32()
            guard try r.uint8() == UInt8(ascii: "N") else { throw ByteReader.malformed("insert without a new tuple") }
            self = .insert(relation: rel, new: try r.tuple())
        case UInt8(ascii: "U"):
            let rel = try r.uint32()
            var kind = try r.uint8()
            var old: [TupleValue]?
            var keyOnly = false
            if kind == UInt8(ascii: "K") || kind == UInt8(ascii: "O") {
                keyOnly = kind == UInt8(ascii: "K")
                old = try r.tuple()
                kind = try r.uint8()
            }
            guard kind == UInt8(ascii: "N") else { throw ByteReader.malformed("update without a new tuple") }
            self = .update(relation: rel, old: old, oldIsKeyOnly: keyOnly, new: try r.tuple())
        case UInt8(ascii: "D"):
            let rel = try r.uint32()
            let kind = try r.uint8()
            guard kind == UInt8(ascii: "K") || kind == UInt8(ascii: "O") else {
                throw ByteReader.malformed("delete without an old tuple")
            }
            self = .delete(relation: rel, old: try r.tuple(), oldIsKeyOnly: kind == UInt8(ascii: "K"))
        case UInt8(ascii: "T"):
            let n = Int(try r.uint32())
            let options = try r.uint8()
            // The count comes from the wire: checked against the bytes there before anything is allocated for it.
            guard n <= (r.bytes.count - r.i) / 4 else {
                throw ByteReader.malformed("truncate of more relations than the message holds")
            }
            self = .truncate(
                relations: try (0..<n).map { _ in try r.uint32() }, cascade: options & 1 == 1,
                restartIdentity: options & 2 == 2)
        case UInt8(ascii: "M"):
            let flags = try r.uint8()
            let lsn = LSN(try r.uint64())
            let prefix = try r.cString()
            let n = Int(try r.uint32())
            guard r.i + n <= r.bytes.count else { throw ByteReader.malformed("message content past the end") }
            self = .message(
                transactional: flags & 1 == 1, lsn: lsn, prefix: prefix, content: Array(r.bytes[r.i..<(r.i + n)]))
        default:
            self = .other(tag)
        }
    }
}

/// Big-endian reads over a message, as the replication protocol writes them.
struct ByteReader {
    let bytes: [UInt8]
    var i = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func malformed(_ what: String) -> PostgresError {
        PostgresError.decoding(what)
    }

    mutating func uint8() throws -> UInt8 {
        guard i < bytes.count else { throw Self.malformed("message too short") }
        defer { i += 1 }
        return bytes[i]
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let n = MemoryLayout<T>.size
        guard i + n <= bytes.count else { throw Self.malformed("message too short") }
        var v: T = 0
        for k in i..<(i + n) { v = v << 8 | T(bytes[k]) }
        i += n
        return v
    }

    mutating func uint16() throws -> UInt16 { try integer(UInt16.self) }
    mutating func uint32() throws -> UInt32 { try integer(UInt32.self) }
    mutating func uint64() throws -> UInt64 { try integer(UInt64.self) }

    mutating func cString() throws -> String {
        guard let end = bytes[i...].firstIndex(of: 0) else { throw Self.malformed("unterminated string") }
        defer { i = end + 1 }
        return String(decoding: bytes[i..<end], as: UTF8.self)
    }

    mutating func tuple() throws -> [PgOutputMessage.TupleValue] {
        let n = Int(try uint16())
        var values: [PgOutputMessage.TupleValue] = []
        values.reserveCapacity(n)
        for _ in 0..<n {
            switch try uint8() {
            case UInt8(ascii: "n"): values.append(.null)
            case UInt8(ascii: "u"): values.append(.unchangedToast)
            case UInt8(ascii: "t"):
                let len = Int(try uint32())
                guard i + len <= bytes.count else { throw Self.malformed("column value past the end") }
                values.append(.text(String(decoding: bytes[i..<(i + len)], as: UTF8.self)))
                i += len
            case let k: throw Self.malformed("unknown column kind \(k)")
            }
        }
        return values
    }
}
