import Foundation
import RealmAdapter

/// How the store's untyped columns (keys, links, list owners: a type's key may be an int in one
/// Realm and a string in another) are kept on Postgres: in one `bytea`, whose bytes sort as
/// SQLite sorts the values, so that equality, order and indexes behave alike on both backends.
///
/// A tag byte, then the value: `01` and the integer in 8 big-endian bytes with its sign bit
/// flipped (negative numbers first), `02` and the text's UTF-8, `03` and a blob's bytes. SQLite
/// sorts integers before text before blobs, and text (its BINARY collation) and blobs by their
/// bytes: so do these, compared as Postgres compares `bytea`.
package enum PostgresKeyCodec {
    static let integerTag: UInt8 = 1
    static let textTag: UInt8 = 2
    static let blobTag: UInt8 = 3

    /// The bytes of a key; nil for NULL.
    /// - Throws: `StoreError` for a real that is not an integer (no key is one).
    package static func encode(_ value: StoredValue) throws -> Data? {
        var bytes: [UInt8] = []
        return try encode(value) { bytes.append($0) } ? Data(bytes) : nil
    }

    /// The bytes of a key, one by one to `byte`; false for NULL, which has none.
    /// - Throws: `StoreError` for a real that is not an integer (no key is one).
    static func encode(_ value: StoredValue, _ byte: (UInt8) -> Void) throws -> Bool {
        switch value {
        case .null: return false
        case .integer(let n): integer(n, byte)
        case .real(let d):
            guard let n = Int64(exactly: d) else { throw StoreError.notAKey("a real number") }
            integer(n, byte)
        case .text(let s):
            byte(textTag)
            for b in s.utf8 { byte(b) }
        case .blob(let data):
            byte(blobTag)
            for b in data { byte(b) }
        }
        return true
    }

    /// The value of a key's bytes.
    /// - Throws: `StoreError` for bytes no key was encoded to.
    package static func decode(_ bytes: Data) throws -> StoredValue {
        guard let tag = bytes.first else { throw StoreError.notAKey("no bytes") }
        let body = bytes.dropFirst()
        switch tag {
        case integerTag:
            guard body.count == 8 else { throw StoreError.notAKey("an integer of \(body.count) bytes") }
            let biased = body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .integer(Int64(bitPattern: biased ^ (1 << 63)))
        case textTag: return .text(String(decoding: body, as: UTF8.self))
        case blobTag: return .blob(Data(body))
        default: throw StoreError.notAKey("tag \(tag)")
        }
    }

    private static func integer(_ n: Int64, _ byte: (UInt8) -> Void) {
        let biased = UInt64(bitPattern: n) ^ (1 << 63)
        byte(integerTag)
        for shift in stride(from: 56, through: 0, by: -8) { byte(UInt8(truncatingIfNeeded: biased >> shift)) }
    }
}

extension StoreError {
    /// A value where the store keeps only keys, or bytes that are not a key's.
    static func notAKey(_ what: String) -> StoreError {
        StoreError(.failed, code: "key", message: "The store found \(what) where it keeps keys.")
    }
}
