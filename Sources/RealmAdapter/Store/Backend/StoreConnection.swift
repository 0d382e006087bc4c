/// One connection of a store's backend, inside a transaction the backend began (or, for
/// ``StoreBackend/onWriter(_:)``, outside one).
///
/// This is the seam between the store's semantics, written once in core, and a database
/// engine: a backend owns its SQL dialect and its driver, never what a Realm means. Its shape
/// is GRDB's (`execute(sql:arguments:)`, cached statements, typed `fetch` helpers), so the
/// store reads the same on every backend.
package protocol StoreConnection {
    /// The SQL of this connection's backend, where it differs.
    var dialect: any StoreDialect { get }
    /// Runs SQL that returns no row: one statement with arguments, or several without.
    func execute(sql: String, arguments: StoreArguments) throws
    /// A prepared statement for `sql`, kept for this connection's next use of the same SQL.
    func cachedStatement(sql: String) throws -> any StoreStatement
    /// A prepared statement for `sql` that is not kept (SQL made for one request).
    func makeStatement(sql: String) throws -> any StoreStatement
    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    var changesCount: Int { get }
    /// The integer key the last INSERT gave its row.
    var lastInsertedRowID: Int64 { get }
    /// An object that lives exactly as long as the connection: a statement prepared on it may be
    /// kept past a transaction only while the backend's connection gives this same object (a
    /// backend may connect anew after a connection broke).
    var lifetime: AnyObject { get }
}

extension StoreConnection {
    package func execute(sql: String) throws { try execute(sql: sql, arguments: []) }
}

/// A prepared statement of a ``StoreConnection``: bound, stepped through its rows, reset.
///
/// Binding a Realm ``Value`` goes through ``bind(_:at:)-(Value,_)``, which applies the value
/// rule (``RealmTables/encode(_:)``) without building a ``StoredValue``: the hot path of every
/// write. Parameters are numbered from 1, columns from 0.
package protocol StoreStatement {
    /// Makes the statement ready to run again; its bindings stay until rebound or cleared.
    func reset()
    /// Sets every parameter to NULL, releasing what was bound.
    func clearBindings()
    func bind(_ value: StoredValue, at index: Int32) throws
    func bind(_ value: Int64, at index: Int32)
    /// Binds a Realm value in its stored form (the value rule of ``RealmTables/encode(_:)``).
    func bind(_ value: Value, at index: Int32) throws
    /// Binds a Realm value in a column of keys (``StoreArgument/key(_:)``).
    func bind(key: Value, at index: Int32) throws
    /// Binds the next value of a history record as ``bind(_:at:)-(Value,_)`` binds the value it
    /// encodes, without decoding it: its bytes must stay valid until the statement has run.
    func bind(_ record: inout BinaryReader, at index: Int32) throws
    /// Binds the next value of a history record as ``bind(key:at:)`` binds the key it encodes.
    func bind(keyOf record: inout BinaryReader, at index: Int32) throws
    /// Binds bytes as a blob without copying them: they must stay valid until the statement has run.
    func bind(borrowing bytes: UnsafeRawBufferPointer, at index: Int32) throws
    /// Runs the statement to its next row: true when it stands on one, false when done.
    func step() throws -> Bool
    var columnCount: Int32 { get }
    /// A column of the row the statement stands on.
    func column(_ index: Int32) -> StoredValue
    func int64(_ index: Int32) -> Int64
    /// Runs a bound statement once, as ``run()``, when nothing reads its rows or its count and
    /// its failure fails the whole transaction: a backend may hold it back and send it with the
    /// transaction's next statement or its commit, in one round trip, and throw its error there
    /// (keeping copies of what was bound, borrowed bytes included).
    func runDeferred() throws
}

extension StoreStatement {
    /// Runs a bound statement once and resets it.
    package func run() throws {
        defer { reset() }
        _ = try step()
    }

    package func runDeferred() throws { try run() }

    /// Runs the statement once with `arguments`, as ``runDeferred()`` does.
    package func executeDeferred(arguments: StoreArguments = []) throws {
        try bind(arguments: arguments)
        try runDeferred()
    }

    /// Binds `arguments` from parameter 1 (after a reset).
    package func bind(arguments: StoreArguments) throws {
        reset()
        for (i, v) in arguments.values.enumerated() { try bind(v, at: Int32(i + 1)) }
    }

    package func bind(_ argument: StoreArgument, at index: Int32) throws {
        switch argument {
        case .stored(let v): try bind(v, at: index)
        case .value(let v): try bind(v, at: index)
        case .key(let v): try bind(key: v, at: index)
        }
    }

    /// Runs the statement once with `arguments`.
    package func execute(arguments: StoreArguments = []) throws {
        try bind(arguments: arguments)
        try run()
    }

    /// The first column of the first row as an integer; nil when there is no row.
    package func firstInteger(_ arguments: StoreArguments) throws -> Int64? {
        try bind(arguments: arguments)
        defer { reset() }
        return try step() ? int64(0) : nil
    }
}
