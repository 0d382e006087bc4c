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
        switch value {
        case .null: return nil
        case .integer(let n): return integer(n)
        case .real(let d):
            guard let n = Int64(exactly: d) else { throw StoreError.notAKey("a real number") }
            return integer(n)
        case .text(let s): return Data([textTag]) + Data(s.utf8)
        case .blob(let b): return Data([blobTag]) + b
        }
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

    private static func integer(_ n: Int64) -> Data {
        let biased = UInt64(bitPattern: n) ^ (1 << 63)
        return Data([integerTag] + (0..<8).map { UInt8(truncatingIfNeeded: biased >> (56 - 8 * $0)) })
    }
}

extension StoreError {
    /// A value where the store keeps only keys, or bytes that are not a key's.
    static func notAKey(_ what: String) -> StoreError {
        StoreError(.failed, code: "key", message: "The store found \(what) where it keeps keys.")
    }
}
