import Foundation
import PostgresWire
import RealmAdapter

/// The Postgres backend's statement: core's SQL with its placeholders numbered, its arguments
/// bound as Postgres takes them, run when first stepped, its rows read as ``StoredValue``s.
///
/// Realm values are bound natively (a `double precision` keeps NaN and -0.0), keys through
/// ``PostgresKeyCodec``. A statement the store may see fail on a key (an INSERT) runs inside a
/// savepoint, so that its failure undoes it alone, as SQLite's does, and the store's
/// transaction goes on. A long INSERT of many rows is sent as a `COPY` (``PostgresCopyInsert``).
final class PostgresStoreStatement: StoreStatement {
    private let sql: String
    /// The parameters the SQL uses, by their number in core's SQL, in the order Postgres takes them.
    private let used: [Int]
    private let session: PostgresSession
    private unowned let connection: PostgresStoreConnection
    private let undoneAlone: Bool
    private var copy: PostgresCopyInsert?
    private var parameters: [PostgresParameter?] = []
    /// Per parameter: `text` for text (compared with a column of another type, it is an error,
    /// never a silent cast), and otherwise as the statement uses it.
    private var types: [UInt32] = []
    private var rows: [[String?]]?
    private var columnTypes: [UInt32] = []
    private var next = 0

    init(sql: String, session: PostgresSession, connection: PostgresStoreConnection) {
        self.session = session
        self.connection = connection
        undoneAlone = sql.drop { $0.isWhitespace }.prefix(6).uppercased() == "INSERT"
        copy = undoneAlone ? PostgresCopyInsert(sql) : nil
        // A `COPY` sends no parameters: its thousands of numbers are not kept.
        (self.sql, used) = copy == nil ? PostgresPlaceholders.compacted(sql) : (sql, [])
    }

    func reset() {
        rows = nil
        next = 0
    }

    func clearBindings() {
        (parameters, types) = ([], [])
        copy?.clear()
    }

    func bind(_ value: StoredValue, at index: Int32) throws {
        if copying(index, { PostgresCopyInsert.append(value, to: &$0) }) { return }
        if case .text = value {
            set(Self.parameter(value), at: index, text: true)
        } else {
            set(Self.parameter(value), at: index)
        }
    }
    func bind(_ value: Int64, at index: Int32) {
        if copying(index, { $0 += String(value).utf8 }) { return }
        set(.text(String(value)), at: index)
    }

    func bind(_ value: Value, at index: Int32) throws {
        switch value {
        case .float(let f) where copy != nil: try bind(StoredValue.real(Double(f)), at: index)
        case .double(let d) where copy != nil: try bind(StoredValue.real(d), at: index)
        case .float(let f): set(Self.parameter(.real(Double(f))), at: index)
        case .double(let d): set(Self.parameter(.real(d)), at: index)
        default: try bind(RealmTables.encode(value), at: index)
        }
    }

    func bind(key: Value, at index: Int32) throws {
        let stored = try RealmTables.encode(key)
        if try copying(index, { try PostgresCopyInsert.append(key: stored, to: &$0) }) { return }
        set(try PostgresKeyCodec.encode(stored).map(PostgresParameter.binary), at: index)
    }

    func bind(_ record: inout BinaryReader, at index: Int32) throws { try bind(record.value(), at: index) }
    func bind(keyOf record: inout BinaryReader, at index: Int32) throws { try bind(key: record.value(), at: index) }

    func bind(borrowing bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        if copying(index, { PostgresCopyInsert.append(bytes: bytes, to: &$0) }) { return }
        set(.binary(Data(bytes)), at: index)
    }

    func step() throws -> Bool {
        if rows == nil { try run() }
        guard let rows, next < rows.count else { return false }
        next += 1
        return true
    }

    var columnCount: Int32 { Int32(columnTypes.count) }

    func column(_ index: Int32) -> StoredValue {
        guard let text = rows![next - 1][Int(index)] else { return .null }
        return Self.stored(text, type: columnTypes[Int(index)])
    }

    func int64(_ index: Int32) -> Int64 { Int64.fromStored(column(index)) ?? 0 }

    // MARK: Running

    /// Held back until the transaction's next statement or its end, when in a write
    /// transaction (a `COPY` is sent at once).
    func runDeferred() throws {
        defer { reset() }
        guard copy == nil, connection.inWriteTransaction else {
            _ = try step()
            return
        }
        let (sent, sentTypes) = sentParameters()
        try connection.holdBack(PostgresPipelined(sql, parameters: sent, types: sentTypes))
    }

    /// The parameters bound, and their types, in the order the SQL takes them.
    private func sentParameters() -> ([PostgresParameter?], [UInt32]) {
        (
            used.map { $0 <= parameters.count ? parameters[$0 - 1] : nil },
            used.map { $0 <= types.count ? types[$0 - 1] : 0 }
        )
    }

    private func run() throws {
        if let copy { return try run(copy) }
        let (sent, sentTypes) = sentParameters()
        let inSavepoint = undoneAlone && connection.inWriteTransaction
        let result = try connection.withLead { lead in
            guard inSavepoint || !lead.isEmpty else {
                return try session.query(sql, parameters: sent, types: sentTypes)
            }
            return try session.query(sql, parameters: sent, types: sentTypes, after: lead, inSavepoint: inSavepoint)
        }
        (rows, columnTypes, next) = (result.rows, result.types, 0)
        connection.changesCount = result.affected
    }

    /// Sends the rows bound as the data of the `COPY`, in pieces of 64 KiB.
    private func run(_ copy: PostgresCopyInsert) throws {
        guard copy.isComplete else { throw StoreError.boundOutOfOrder(copy.outOfOrder, sql: sql) }
        let send = { (write: (UnsafeRawBufferPointer) throws -> Void) in
            try copy.data.withUnsafeBytes { data in
                for start in stride(from: 0, to: data.count, by: 1 << 16) {
                    try write(UnsafeRawBufferPointer(rebasing: data[start..<min(data.count, start + 1 << 16)]))
                }
            }
        }
        connection.changesCount = try connection.withLead { lead in
            try connection.sendAlone(lead)
            return connection.inWriteTransaction
                ? try session.copyInSavepoint(copy.sql, bytes: send) : try session.copyIn(copy.sql, bytes: send)
        }
        self.copy?.clear()  // sent: its rows are not kept (the statement may be)
        (rows, columnTypes, next) = ([], [], 0)
    }

    /// Binds parameter `index` into the `COPY`'s rows, which `write` appends to, when the
    /// statement is sent as one; false when it is not.
    private func copying(_ index: Int32, _ write: (inout [UInt8]) throws -> Void) rethrows -> Bool {
        guard copy != nil else { return false }
        try copy!.bind(at: index, write)
        return true
    }

    private func set(_ parameter: PostgresParameter?, at index: Int32, text: Bool = false) {
        let i = Int(index) - 1
        if parameters.count <= i {
            parameters += Array(repeating: nil, count: i + 1 - parameters.count)
            types += Array(repeating: 0, count: i + 1 - types.count)
        }
        parameters[i] = parameter
        types[i] = text ? Self.textType : 0
    }

    private static let textType: UInt32 = 25

    // MARK: Values

    private static func parameter(_ value: StoredValue) -> PostgresParameter? {
        switch value {
        case .null: nil
        case .integer(let n): .text(String(n))
        case .real(let d): PostgresType.encode(.double(d)).map(PostgresParameter.text)
        case .text(let s): .text(s)
        case .blob(let b): .binary(b)
        }
    }

    /// A column's text, as Postgres writes values of its type, as a stored value.
    static func stored(_ text: String, type: UInt32) -> StoredValue {
        switch type {
        case 20, 21, 23, 26: return Int64(text).map(StoredValue.integer) ?? .text(text)
        case 16: return .integer(text == "t" ? 1 : 0)
        case 700, 701: return .real(Double(text) ?? .nan)
        case 1700:
            if let n = Int64(text) { return .integer(n) }
            return Double(text).map(StoredValue.real) ?? .text(text)
        case 17: return .blob(Data(hex: text.dropFirst(2)) ?? Data())  // `\x00ff…`
        default: return .text(text)
        }
    }
}

extension StoreError {
    /// A statement sent as a `COPY` whose parameters were not all bound in order (a fault of the
    /// store's code, never of the data).
    static func boundOutOfOrder(_ parameter: Int32?, sql: String) -> StoreError {
        let which = parameter.map { "parameter \($0) was bound out of order" } ?? "not every parameter was bound"
        return StoreError(.failed, code: "postgres copy", message: "\(which) in \(sql.prefix(80))…")
    }

    /// A Postgres error in the store's terms: a constraint, a conflict worth trying again, or a failure.
    init(_ e: PostgresError) {
        let state = e.sqlState?.rawValue ?? ""
        let kind: Kind =
            state.hasPrefix("23")
            ? .constraint
            : ["40001", "40P01", "55P03"].contains(state) ? .busy : e.isTransient ? .unreachable : .failed
        self.init(kind, code: "postgres \(state.isEmpty ? "\(e.code)" : state)", message: e.message)
    }
}
