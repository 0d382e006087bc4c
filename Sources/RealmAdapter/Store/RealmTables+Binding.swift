import Foundation
import GRDB
import GRDBSQLite

extension RealmTables {
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// What the text binding returns for a string holding a NUL (no SQLite result code is negative).
    private static let nulInText: Int32 = -1

    /// Runs a cached statement with `values` bound straight through the SQLite C API.
    ///
    /// This is the hot path of every INSERT, list edit and SET: GRDB's general argument
    /// handling (an array of `DatabaseValue`s built through key paths) cost more than SQLite
    /// itself here. Constraint failures are reported as `DatabaseError` like GRDB does.
    static func execute(_ statement: Statement, _ values: [Value], db: Database) throws {
        let stmt = statement.sqliteStatement
        sqlite3_reset(stmt)
        for (i, v) in values.enumerated() { try bind(v, to: stmt, at: Int32(i + 1), db: db) }
        try step(stmt, db: db)
    }

    /// Runs a cached query with `values` bound as ``execute(_:_:db:)`` binds them: the first
    /// column of its first row as an integer, or nil when it has no row.
    static func firstInteger(_ statement: Statement, _ values: [Value], db: Database) throws -> Int64? {
        let stmt = statement.sqliteStatement
        sqlite3_reset(stmt)
        for (i, v) in values.enumerated() { try bind(v, to: stmt, at: Int32(i + 1), db: db) }
        defer { sqlite3_reset(stmt) }
        switch sqlite3_step(stmt) {
        case SQLITE_ROW: return sqlite3_column_int64(stmt, 0)
        case SQLITE_DONE: return nil
        case let rc:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    /// Binds one value to a parameter (1-based) of a raw statement.
    static func bind(_ v: Value, to stmt: OpaquePointer, at index: Int32, db: Database) throws {
        let rc: Int32
        switch v {
        case .null: rc = sqlite3_bind_null(stmt, index)
        case .bool(let b): rc = sqlite3_bind_int64(stmt, index, b ? 1 : 0)
        case .int(let n): rc = sqlite3_bind_int64(stmt, index, n)
        case .float(let f): rc = bindReal(Double(f), stmt, index)
        case .double(let d): rc = bindReal(d, stmt, index)
        case .string(let s):
            // A nil base address would bind NULL: an empty string must stay an empty string.
            func bindText(_ u: UnsafeBufferPointer<UInt8>) -> Int32 {
                // SQLite reads text back up to the first NUL, and Postgres text cannot hold one:
                // refused, rather than stored cut short.
                if let base = u.baseAddress, memchr(base, 0, u.count) != nil { return Self.nulInText }
                return u.withMemoryRebound(to: CChar.self) { c in
                    if let base = c.baseAddress {
                        sqlite3_bind_text(stmt, index, base, Int32(c.count), transient)
                    } else {
                        sqlite3_bind_text(stmt, index, "", 0, transient)
                    }
                }
            }
            // Native strings lend their bytes as they are; others are made contiguous in a copy.
            if let bound = s.utf8.withContiguousStorageIfAvailable(bindText) {
                rc = bound
            } else {
                var copy = s
                rc = copy.withUTF8(bindText)
            }
            if rc == Self.nulInText { throw RealmAdapterError.nulInString() }
        case .data(let d):
            rc =
                d.isEmpty
                ? sqlite3_bind_zeroblob(stmt, index, 0)
                : d.withUnsafeBytes { b in sqlite3_bind_blob(stmt, index, b.baseAddress, Int32(b.count), transient) }
        case .date(let t):
            guard let n = t.totalNanoseconds else {
                _ = try encode(v)
                return
            }  // throws the range error
            rc = sqlite3_bind_int64(stmt, index, n)
        case .decimal(let d):
            rc = sqlite3_bind_text(stmt, index, d.description, -1, transient)
        case .uuid(let u):
            rc = withUnsafeBytes(of: u.uuid) { b in sqlite3_bind_blob(stmt, index, b.baseAddress, 16, transient) }
        case .objectId(let o):
            rc = o.bytes.withUnsafeBytes { b in sqlite3_bind_blob(stmt, index, b.baseAddress, 12, transient) }
        case .list:
            throw RealmAdapterError.listInSingleValueColumn()
        }
        guard rc == SQLITE_OK else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    /// Binds a float or double: NaN and -0.0 as their texts (``realAsText(_:)``), which a REAL
    /// column would keep as NULL and 0.0.
    private static func bindReal(_ d: Double, _ stmt: OpaquePointer, _ index: Int32) -> Int32 {
        guard let text = realAsText(d) else { return sqlite3_bind_double(stmt, index, d) }
        return sqlite3_bind_text(stmt, index, text, -1, transient)
    }

    /// Binds the next value of a history record as ``bind(_:to:at:db:)`` binds the ``Value`` it
    /// encodes, without decoding it: text and blobs are bound where they are, so the record's
    /// bytes must stay valid until the statement has run.
    static func bind(_ r: inout BinaryReader, to stmt: OpaquePointer, at index: Int32, db: Database) throws {
        func bytes(_ b: UnsafeRawBufferPointer, text: Bool) -> Int32 {
            guard let base = b.baseAddress, b.count > 0 else {
                return text ? sqlite3_bind_text(stmt, index, "", 0, transient) : sqlite3_bind_zeroblob(stmt, index, 0)
            }
            return text
                ? sqlite3_bind_text(stmt, index, base.assumingMemoryBound(to: CChar.self), Int32(b.count), nil)
                : sqlite3_bind_blob(stmt, index, base, Int32(b.count), nil)
        }
        let rc: Int32
        switch try r.byte() {
        case 0: rc = sqlite3_bind_null(stmt, index)
        case 1: rc = sqlite3_bind_int64(stmt, index, 0)
        case 2: rc = sqlite3_bind_int64(stmt, index, 1)
        case 3: rc = sqlite3_bind_int64(stmt, index, try r.signed())
        case 4: rc = bindReal(Double(Float(bitPattern: try r.raw(UInt32.self))), stmt, index)
        case 5: rc = bindReal(Double(bitPattern: try r.raw(UInt64.self)), stmt, index)
        case 6, 9: rc = bytes(try r.take(Int(try r.varint())), text: true)  // a string, a decimal's text
        case 7: rc = bytes(try r.take(Int(try r.varint())), text: false)
        case 8:
            let t = Timestamp(seconds: try r.signed(), nanoseconds: Int32(truncatingIfNeeded: try r.varint()))
            guard let n = t.totalNanoseconds else {
                _ = try encode(.date(t))
                return
            }  // throws the range error
            rc = sqlite3_bind_int64(stmt, index, n)
        case 10: rc = bytes(try r.take(16), text: false)
        case 11: rc = bytes(try r.take(12), text: false)
        case 12: throw RealmAdapterError.listInSingleValueColumn()
        default: throw BinaryReader.corrupt
        }
        guard rc == SQLITE_OK else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    /// Runs a bound raw statement once and resets it.
    static func step(_ stmt: OpaquePointer, db: Database) throws {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}
