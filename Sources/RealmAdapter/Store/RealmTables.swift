import Foundation
import GRDB

/// How a Realm's objects are laid out in SQLite.
///
/// Realm names are case-sensitive and SQLite identifiers are not, so tables and columns are
/// named by position, which never changes because schemas only grow: type k of Realm r is the
/// table `r{r}_t{k}`, its property j the column `p{j}`, and a list property j the table
/// `r{r}_t{k}_p{j}(owner, idx, value)`. A type without a primary key has a `_key` row key.
struct RealmTables {
    let realmId: Int64

    func table(_ typeOrdinal: Int) -> String { "r\(realmId)_t\(typeOrdinal)" }
    func listTable(_ typeOrdinal: Int, _ propertyOrdinal: Int) -> String { "r\(realmId)_t\(typeOrdinal)_p\(propertyOrdinal)" }
    static func column(_ propertyOrdinal: Int) -> String { "p\(propertyOrdinal)" }

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

    /// Creates the tables of a new type, or the columns and list tables of properties added
    /// to an existing one (`from` is the first new property's ordinal).
    static func create(_ type: ObjectSchema, ordinal: Int, fromProperty first: Int, isNew: Bool,
                       schema: Schema, tables: RealmTables, db: Database) throws {
        let table = tables.table(ordinal)
        func columnType(_ p: Property) -> String? {
            switch p.type {
            case .scalar(let s): sqlType(s)
            // Untyped: the target may be added later in the same transaction; keys are stored as given.
            case .link: ""
            default: nil
            }
        }
        if isNew {
            var cols: [String] = []
            if type.primaryKey == nil { cols.append("_key INTEGER PRIMARY KEY") }
            for (j, p) in type.properties.enumerated() {
                guard let ct = columnType(p) else { continue }
                cols.append("\(column(j)) \(ct)" + (p.name == type.primaryKey ? " PRIMARY KEY NOT NULL" : ""))
            }
            try db.execute(sql: "CREATE TABLE \(table) (\(cols.joined(separator: ", ")))")
        }
        for j in first..<type.properties.count {
            let p = type.properties[j]
            if !isNew, let ct = columnType(p) {
                try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(column(j)) \(ct)")
                if let d = p.defaultValue {
                    try db.execute(sql: "UPDATE \(table) SET \(column(j)) = ?", arguments: [try encode(d.coerced(to: p, in: schema))])
                }
            }
            // The database key is indexed too: database changes find objects by it.
            if p.isIndexed || p.name == type.databasePrimaryKey || p.type.linkTarget != nil && !p.type.isList {
                try db.execute(sql: "CREATE INDEX \(table)_i\(j) ON \(table)(\(column(j)))")
            }
            if case .list(let element) = p.type {
                let lt = tables.listTable(ordinal, j)
                let valueType = switch element {
                case .scalar(let s): sqlType(s)
                case .link: ""
                }
                try db.execute(sql: "CREATE TABLE \(lt) (owner NOT NULL, idx INTEGER NOT NULL, value \(valueType))")
                try db.execute(sql: "CREATE INDEX \(lt)_owner ON \(lt)(owner, idx)")
                if case .link = element { try db.execute(sql: "CREATE INDEX \(lt)_value ON \(lt)(value)") }
            }
        }
    }

    // MARK: Values

    /// The SQLite form of a typed value.
    static func encode(_ v: Value) throws -> DatabaseValue {
        switch v {
        case .null: return .null
        case .bool(let b): return (b ? 1 : 0 as Int64).databaseValue
        case .int(let i): return i.databaseValue
        case .float(let f): return Double(f).databaseValue
        case .double(let d): return d.databaseValue
        case .string(let s): return s.databaseValue
        case .data(let d): return d.databaseValue
        case .date(let t):
            guard let n = t.totalNanoseconds else {
                throw RealmAdapterError(.invalidValue, "date \(t.iso8601) is outside the supported range (years 1678 to 2261)")
            }
            return n.databaseValue
        case .decimal(let d): return d.description.databaseValue
        case .uuid(let u): return withUnsafeBytes(of: u.uuid) { Data($0) }.databaseValue
        case .objectId(let o): return Data(o.bytes).databaseValue
        case .list: throw RealmAdapterError(.invalidValue, "a list cannot be stored in a single-value column")
        }
    }

    /// The typed value of a SQLite column of scalar type `s`.
    static func decode(_ dv: DatabaseValue, as s: ScalarType) -> Value {
        switch dv.storage {
        case .null: return .null
        case .int64(let i):
            switch s {
            case .bool: return .bool(i != 0)
            case .date: return .date(Timestamp(totalNanoseconds: i))
            case .float: return .float(Float(i))
            case .double: return .double(Double(i))
            default: return .int(i)
            }
        case .double(let d): return s == .float ? .float(Float(d)) : .double(d)
        case .string(let str):
            if s == .decimal, let d = DecimalNumber(exactly: str) { return .decimal(d) }
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
