import Foundation
import GRDB
import RealmAdapter

/// Values between the mapping engine and SQLite's storage classes (INTEGER, REAL, TEXT, BLOB).
///
/// SQLite keeps what it is given, so this dialect decides: booleans are 0 and 1; dates are ISO
/// 8601 text (UTC, as the store prints them); decimals, UUIDs and ObjectIds are their text;
/// data is a BLOB. Reads give the mapping engine values it coerces to the property's type.
enum SQLiteValues {
    /// The value to bind for a column value.
    static func bindable(_ v: Value) -> (any DatabaseValueConvertible)? {
        switch v {
        case .null: nil
        case .bool(let b): b ? 1 : 0
        case .int(let i): i
        case .float(let f): Double(f)
        case .double(let d): d
        case .string(let s): s
        case .data(let d): d
        case .date(let t): t.iso8601
        case .decimal(let d): d.description
        case .uuid(let u): u.uuidString.lowercased()
        case .objectId(let o): o.description
        case .list(let items): JSONValue.array(items.map(\.json)).serialized()
        }
    }

    /// A stored value as the mapping engine reads it: booleans from their integers, everything
    /// else as stored (the engine coerces text to dates, decimals, UUIDs).
    static func value(_ dbValue: DatabaseValue, kind: RealmAdapter.ColumnMapping.Kind?) -> Value {
        switch dbValue.storage {
        case .null: return .null
        case .int64(let i): return isBool(kind) ? .bool(i != 0) : .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .blob(let d): return .data(d)
        }
    }

    /// A value of the change log's JSON (`{"blob": "<hex>"}` for a BLOB).
    static func value(json: JSONValue, kind: RealmAdapter.ColumnMapping.Kind?) -> Value {
        switch json {
        case .int(let i): return isBool(kind) ? .bool(i != 0) : .int(i)
        case .object(let members) where members.count == 1 && members[0].key == "blob":
            guard case .string(let hex) = members[0].value else { return .null }
            return .data(Data(hexDigits: hex))
        default: return (try? Value(json: json)) ?? .null
        }
    }

    static func isBool(_ kind: RealmAdapter.ColumnMapping.Kind?) -> Bool {
        if case .scalar(.bool)? = kind { true } else { false }
    }

    /// The declared type of a column holding a Realm scalar.
    static func declaredType(_ s: ScalarType) -> String {
        switch s {
        case .bool, .int: "INTEGER"
        case .float, .double: "REAL"
        case .data: "BLOB"
        case .string, .date, .decimal, .uuid, .objectId: "TEXT"
        }
    }
}

extension Data {
    /// Bytes from hexadecimal digits (SQLite's `hex()`).
    init(hexDigits hex: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for c in hex.utf8 {
            let n: UInt8 = c <= 57 ? c - 48 : (c | 0x20) - 87
            if let h = high {
                bytes.append(h << 4 | n)
                high = nil
            } else {
                high = n
            }
        }
        self.init(bytes)
    }
}

/// Identifiers in double quotes, as SQLite reads them.
enum SQLiteSQL {
    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A string literal (for trigger bodies, which take no parameters).
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}
