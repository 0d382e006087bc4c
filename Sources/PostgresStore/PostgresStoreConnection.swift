import PostgresWire
import RealmAdapter

/// The Postgres backend's connection, as the store sees it inside one of the backend's
/// transactions: statements prepared once per connection, kept by their SQL.
final class PostgresStoreConnection: StoreConnection, @unchecked Sendable {
    // @unchecked: used only on its libpq connection's queue (inside `sessionSync`), which the
    // backend hands to one transaction at a time.
    let session: PostgresSession
    /// Whether a write transaction is open (its INSERTs and UPDATEs then run in savepoints).
    var inWriteTransaction = false
    var changesCount = 0
    private var cache: [String: PostgresStoreStatement] = [:]
    var lifetime: AnyObject { self }

    init(session: PostgresSession) { self.session = session }

    var dialect: any StoreDialect { PostgresStoreDialect() }

    func execute(sql: String, arguments: StoreArguments) throws {
        guard arguments.values.isEmpty else {
            return try makeStatement(sql: sql).execute(arguments: arguments)
        }
        // Several statements, or one without parameters: as they are, in one round trip.
        do { try session.execute(PostgresPlaceholders.numbered(sql)) } catch let e as PostgresError {
            throw StoreError(e)
        }
    }

    func cachedStatement(sql: String) throws -> any StoreStatement {
        if let s = cache[sql] { return s }
        if cache.count >= 500 { cache.removeAll() }
        let s = PostgresStoreStatement(sql: sql, session: session, connection: self)
        cache[sql] = s
        return s
    }

    func makeStatement(sql: String) throws -> any StoreStatement {
        PostgresStoreStatement(sql: sql, session: session, connection: self)
    }

    /// The value the last INSERT took from a table's identity column in this session.
    var lastInsertedRowID: Int64 {
        let text = (try? session.query("SELECT lastval()"))?.rows.first?.first ?? nil
        return text.flatMap { Int64($0) } ?? 0
    }
}
