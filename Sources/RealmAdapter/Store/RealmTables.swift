import Foundation

/// One Realm's view of the store's tables (``StoreLayout``): its id, which is the first column
/// of every row it has, and the tables and columns of its types' schemas. Also the SQLite form
/// of values.
package struct RealmTables {
    let realmId: Int64
    let layout: StoreLayout

    /// The tables and columns of type `t` of this Realm's schema.
    func of(_ t: ObjectSchema, db: any StoreConnection) throws -> TypeTables { try layout.tables(of: t, db: db) }

    static func sqlType(_ s: ScalarType) -> String {
        switch s {
        case .bool, .int, .date: "INTEGER"
        case .float, .double: "REAL"
        case .string, .decimal: "TEXT"
        case .data, .uuid, .objectId: "BLOB"
        }
    }

    /// The SQLite type of a link column: the target's key type.
    static func keyType(of target: ObjectSchema) -> ScalarType {
        if let pk = target.primaryKeyProperty, case .scalar(let s) = pk.type { return s }
        return .int
    }

    // MARK: Values

    /// How a NaN float or double is stored: SQLite turns a REAL NaN into NULL, so it is kept as
    /// this text in the property's REAL column (which sorts it after every number).
    static let nanText = "NaN"
    /// How -0.0 is stored: a REAL column keeps an integral value as an integer, and -0.0 would
    /// read back as 0.0 (its sign lost), so it is kept as this text, which no affinity converts.
    static let negativeZeroText = "-0 (negative zero)"

    /// The text a float or double that a REAL column cannot keep is stored as (NaN, -0.0); nil for any other.
    static func realAsText(_ d: Double) -> String? {
        d.isNaN ? nanText : (d == 0 && d.sign == .minus ? negativeZeroText : nil)
    }

    /// The stored form of a typed value: the value rule every backend binds by
    /// (``StoreStatement/bind(_:at:)-(Value,_)`` applies it without building the result).
    package static func encode(_ v: Value) throws -> StoredValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .int(let i): return .integer(i)
        case .float(let f): return realAsText(Double(f)).map(StoredValue.text) ?? .real(Double(f))
        case .double(let d): return realAsText(d).map(StoredValue.text) ?? .real(d)
        case .string(let s):
            // Text is read back up to a NUL, and Postgres text cannot hold one.
            if Value.containsNUL(s) { throw RealmAdapterError.nulInString() }
            return .text(s)
        case .data(let d): return .blob(d)
        case .date(let t):
            guard let n = t.totalNanoseconds else {
                throw RealmAdapterError.dateOutOfRange("date \(t.iso8601)")
            }
            return .integer(n)
        case .decimal(let d): return .text(d.description)
        case .uuid(let u): return .blob(withUnsafeBytes(of: u.uuid) { Data($0) })
        case .objectId(let o): return .blob(Data(o.bytes))
        case .list: throw RealmAdapterError.listInSingleValueColumn()
        }
    }

    /// The typed value of a stored column of scalar type `s`.
    static func decode(_ stored: StoredValue, as s: ScalarType) -> Value {
        switch stored {
        case .null: return .null
        case .integer(let i):
            switch s {
            case .bool: return .bool(i != 0)
            case .date: return .date(Timestamp(totalNanoseconds: i))
            case .float: return .float(Float(i))
            case .double: return .double(Double(i))
            default: return .int(i)
            }
        case .real(let d): return s == .float ? .float(Float(d)) : .double(d)
        case .text(let str):
            if s == .decimal, let d = DecimalNumber(exactly: str) { return .decimal(d) }
            if s == .float || s == .double, let d = str == nanText ? .nan : str == negativeZeroText ? -0.0 : nil {
                return s == .float ? .float(Float(d)) : .double(d)
            }
            return .string(str)
        case .blob(let data):
            switch s {
            case .uuid where data.count == 16:
                return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            case .objectId: return ObjectId(bytes: [UInt8](data)).map(Value.objectId) ?? .data(data)
            default: return .data(data)
            }
        }
    }
}
