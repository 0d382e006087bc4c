/// A row read from a store: its columns in order (as GRDB's `Row`), typed by a subscript.
package struct StoreRow {
    package var values: [StoredValue]

    /// The row the statement stands on.
    init(_ statement: any StoreStatement) {
        values = (0..<statement.columnCount).map { statement.column($0) }
    }

    package var count: Int { values.count }

    /// Column `index` as a `T` (an optional type reads NULL as nil). A column of another kind is
    /// a fault of the store's own SQL, as in GRDB.
    package subscript<T: StoredConvertible>(_ index: Int) -> T {
        guard let v = T.fromStored(values[index]) else {
            preconditionFailure(StoreError.unexpected(values[index], as: T.self).message + " (column \(index))")
        }
        return v
    }
}

/// Rows read one at a time from a statement (as GRDB's cursors): never all in memory.
package final class StoreCursor {
    private let statement: any StoreStatement
    private var done = false

    init(_ statement: any StoreStatement, arguments: StoreArguments) throws {
        self.statement = statement
        try statement.bind(arguments: arguments)
    }

    deinit { if !done { statement.reset() } }

    package func next() throws -> StoreRow? {
        guard !done else { return nil }
        if try statement.step() { return StoreRow(statement) }
        done = true
        statement.reset()
        return nil
    }
}

extension StoreRow {
    package static func fetchCursor(_ statement: any StoreStatement, arguments: StoreArguments = []) throws
        -> StoreCursor
    {
        try StoreCursor(statement, arguments: arguments)
    }

    package static func fetchCursor(_ db: any StoreConnection, sql: String, arguments: StoreArguments = []) throws
        -> StoreCursor
    {
        try StoreCursor(db.makeStatement(sql: sql), arguments: arguments)
    }

    package static func fetchAll(_ statement: any StoreStatement, arguments: StoreArguments = []) throws -> [StoreRow] {
        let rows = try fetchCursor(statement, arguments: arguments)
        var out: [StoreRow] = []
        while let r = try rows.next() { out.append(r) }
        return out
    }

    package static func fetchAll(_ db: any StoreConnection, sql: String, arguments: StoreArguments = []) throws
        -> [StoreRow]
    {
        try fetchAll(db.makeStatement(sql: sql), arguments: arguments)
    }

    package static func fetchOne(_ statement: any StoreStatement, arguments: StoreArguments = []) throws -> StoreRow? {
        try fetchCursor(statement, arguments: arguments).next()
    }

    package static func fetchOne(_ db: any StoreConnection, sql: String, arguments: StoreArguments = []) throws
        -> StoreRow?
    {
        try fetchOne(db.makeStatement(sql: sql), arguments: arguments)
    }
}

extension StoredConvertible {
    /// The first column of the first row; nil when there is no row or it is NULL.
    package static func fetchOne(_ statement: any StoreStatement, arguments: StoreArguments = []) throws -> Self? {
        try statement.bind(arguments: arguments)
        defer { statement.reset() }
        return try statement.step() ? converted(statement.column(0)) : nil
    }

    package static func fetchOne(_ db: any StoreConnection, sql: String, arguments: StoreArguments = []) throws
        -> Self?
    {
        try fetchOne(db.makeStatement(sql: sql), arguments: arguments)
    }

    /// The first column of every row.
    package static func fetchAll(_ statement: any StoreStatement, arguments: StoreArguments = []) throws -> [Self] {
        let rows = try StoreRow.fetchCursor(statement, arguments: arguments)
        var out: [Self] = []
        while let r = try rows.next() {
            guard let v = Self.fromStored(r.values[0]) else { throw StoreError.unexpected(r.values[0], as: Self.self) }
            out.append(v)
        }
        return out
    }

    package static func fetchAll(_ db: any StoreConnection, sql: String, arguments: StoreArguments = []) throws
        -> [Self]
    {
        try fetchAll(db.makeStatement(sql: sql), arguments: arguments)
    }

    private static func converted(_ v: StoredValue) throws -> Self? {
        if case .null = v { return nil }
        guard let t = Self.fromStored(v) else { throw StoreError.unexpected(v, as: Self.self) }
        return t
    }
}

extension StoreError {
    /// A column held another kind of value than the store's SQL reads there.
    static func unexpected(_ v: StoredValue, as type: Any.Type) -> StoreError {
        let kind =
            switch v {
            case .null: "NULL"
            case .integer: "an integer"
            case .real: "a real"
            case .text: "text"
            case .blob: "a blob"
            }
        return StoreError(.failed, code: "type", message: "The store read \(kind) where it expected \(type).")
    }
}
