import Foundation
import GRDB
import GRDBSQLite

/// The SQLite backend's statement: a GRDB statement, bound and stepped through SQLite's C API.
///
/// This is the hot path of every INSERT, list edit and SET: GRDB's general argument handling
/// (an array of `DatabaseValue`s built through key paths) cost more than SQLite itself here.
struct SQLiteStatement: StoreStatement {
    let statement: Statement
    let db: Database

    private var handle: OpaquePointer { statement.sqliteStatement }
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// What the text binding returns for a string holding a NUL (no SQLite result code is negative).
    private static let nulInText: Int32 = -1

    func reset() { sqlite3_reset(handle) }
    func clearBindings() { sqlite3_clear_bindings(handle) }

    func bind(_ value: StoredValue, at index: Int32) throws {
        let stmt = handle
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(stmt, index)
        case .integer(let n): rc = sqlite3_bind_int64(stmt, index, n)
        case .real(let d): rc = sqlite3_bind_double(stmt, index, d)
        case .text(let s):
            rc = try bindText(s, at: index)
        case .blob(let d): rc = bindBlob(d, at: index)
        }
        try check(rc)
    }

    func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(handle, index, value) }

    func bind(_ v: Value, at index: Int32) throws {
        let stmt = handle
        let rc: Int32
        switch v {
        case .null: rc = sqlite3_bind_null(stmt, index)
        case .bool(let b): rc = sqlite3_bind_int64(stmt, index, b ? 1 : 0)
        case .int(let n): rc = sqlite3_bind_int64(stmt, index, n)
        case .float(let f): rc = bindReal(Double(f), at: index)
        case .double(let d): rc = bindReal(d, at: index)
        case .string(let s): rc = try bindText(s, at: index)
        case .data(let d): rc = bindBlob(d, at: index)
        case .date(let t):
            guard let n = t.totalNanoseconds else {
                _ = try RealmTables.encode(v)
                return
            }  // throws the range error
            rc = sqlite3_bind_int64(stmt, index, n)
        case .decimal(let d):
            rc = sqlite3_bind_text(stmt, index, d.description, -1, Self.transient)
        case .uuid(let u):
            rc = withUnsafeBytes(of: u.uuid) { b in sqlite3_bind_blob(stmt, index, b.baseAddress, 16, Self.transient) }
        case .objectId(let o):
            rc = o.bytes.withUnsafeBytes { b in sqlite3_bind_blob(stmt, index, b.baseAddress, 12, Self.transient) }
        case .list:
            throw RealmAdapterError.listInSingleValueColumn()
        }
        try check(rc)
    }

    /// Keys are stored as any other value: the column has no type, each value keeps its own.
    func bind(key: Value, at index: Int32) throws { try bind(key, at: index) }
    func bind(keyOf record: inout BinaryReader, at index: Int32) throws { try bind(&record, at: index) }

    func bind(_ r: inout BinaryReader, at index: Int32) throws {
        let stmt = handle
        func bytes(_ b: UnsafeRawBufferPointer, text: Bool) -> Int32 {
            guard let base = b.baseAddress, b.count > 0 else {
                return text
                    ? sqlite3_bind_text(stmt, index, "", 0, Self.transient) : sqlite3_bind_zeroblob(stmt, index, 0)
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
        case 4: rc = bindReal(Double(Float(bitPattern: try r.raw(UInt32.self))), at: index)
        case 5: rc = bindReal(Double(bitPattern: try r.raw(UInt64.self)), at: index)
        case 6, 9: rc = bytes(try r.take(Int(try r.varint())), text: true)  // a string, a decimal's text
        case 7: rc = bytes(try r.take(Int(try r.varint())), text: false)
        case 8:
            let t = Timestamp(seconds: try r.signed(), nanoseconds: Int32(truncatingIfNeeded: try r.varint()))
            guard let n = t.totalNanoseconds else {
                _ = try RealmTables.encode(.date(t))
                return
            }  // throws the range error
            rc = sqlite3_bind_int64(stmt, index, n)
        case 10: rc = bytes(try r.take(16), text: false)
        case 11: rc = bytes(try r.take(12), text: false)
        case 12: throw RealmAdapterError.listInSingleValueColumn()
        default: throw BinaryReader.corrupt
        }
        try check(rc)
    }

    func bind(borrowing bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        try check(
            bytes.isEmpty
                ? sqlite3_bind_zeroblob(handle, index, 0)
                : sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), nil))
    }

    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc:
            let error = StoreError(sqlite: rc, db)
            sqlite3_reset(handle)
            throw error
        }
    }

    var columnCount: Int32 { sqlite3_column_count(handle) }

    func column(_ index: Int32) -> StoredValue {
        let stmt = handle
        switch sqlite3_column_type(stmt, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(stmt, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(stmt, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(stmt, index))
            guard let text = sqlite3_column_text(stmt, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(stmt, index))
            guard let bytes = sqlite3_column_blob(stmt, index), count > 0 else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }

    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    // MARK: Binding

    /// Binds text by its length. A nil base address would bind NULL: an empty string must stay
    /// an empty string. SQLite reads text back up to the first NUL, and Postgres text cannot
    /// hold one: refused, rather than stored cut short.
    private func bindText(_ s: String, at index: Int32) throws -> Int32 {
        let stmt = handle
        func bind(_ u: UnsafeBufferPointer<UInt8>) -> Int32 {
            if let base = u.baseAddress, memchr(base, 0, u.count) != nil { return Self.nulInText }
            return u.withMemoryRebound(to: CChar.self) { c in
                if let base = c.baseAddress {
                    sqlite3_bind_text(stmt, index, base, Int32(c.count), Self.transient)
                } else {
                    sqlite3_bind_text(stmt, index, "", 0, Self.transient)
                }
            }
        }
        // Native strings lend their bytes as they are; others are made contiguous in a copy.
        let rc: Int32
        if let bound = s.utf8.withContiguousStorageIfAvailable(bind) {
            rc = bound
        } else {
            var copy = s
            rc = copy.withUTF8(bind)
        }
        if rc == Self.nulInText { throw RealmAdapterError.nulInString() }
        return rc
    }

    private func bindBlob(_ d: Data, at index: Int32) -> Int32 {
        d.isEmpty
            ? sqlite3_bind_zeroblob(handle, index, 0)
            : d.withUnsafeBytes { b in sqlite3_bind_blob(handle, index, b.baseAddress, Int32(b.count), Self.transient) }
    }

    /// Binds a float or double: NaN and -0.0 as their texts (``RealmTables/realAsText(_:)``),
    /// which a REAL column would keep as NULL and 0.0.
    private func bindReal(_ d: Double, at index: Int32) -> Int32 {
        guard let text = RealmTables.realAsText(d) else { return sqlite3_bind_double(handle, index, d) }
        return sqlite3_bind_text(handle, index, text, -1, Self.transient)
    }

    private func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw StoreError(sqlite: rc, db) }
    }
}
