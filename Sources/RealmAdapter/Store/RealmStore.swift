import Foundation
import Logging
import Synchronization

/// The embedded Realm store: a directory holding any number of Realms, addressed by path.
///
/// Each Realm has a schema, its objects in typed columns, its lists in order, and an ordered
/// history of transactions (version, origin, commit time, instructions). Everything lives in
/// one SQLite database (`realms.sqlite`) in WAL mode, so a transaction may span several Realms
/// atomically, and several processes may use one store at once: writers wait for each other
/// (up to ``Options/busyTimeout``), readers see a consistent snapshot and are told about new
/// transactions within ``Options/pollInterval``.
///
/// ```swift
/// let store = try RealmStore(directory: "./realms")
/// try store.write(to: "/tasks", origin: "app") { tx in
///     try tx.addType(ObjectSchema(name: "Task", primaryKey: "id", properties: [
///         Property(name: "id", type: .scalar(.int)), Property(name: "title", type: .scalar(.string))]))
///     try tx.create("Task", ["id": 1, "title": "Buy milk"])
/// }
/// ```
///
/// All methods block the calling thread while SQLite works; call them from a thread of your
/// own or through the `async` variants, never directly on the cooperative pool in hot loops.
public final class RealmStore: Sendable {
    public struct Options: Sendable {
        /// How long a writer waits for another process's write to finish. Default 30 s.
        public var busyTimeout: Duration = .seconds(30)
        /// How often the store looks for transactions committed by other processes. Default 10 ms.
        public var pollInterval: Duration = .milliseconds(10)
        /// `true` (default): every commit is on disk before it returns (`synchronous = FULL`),
        /// which exactly-once delivery needs across power loss. `false` survives process crashes only.
        public var durable: Bool = true
        public init() {}
    }

    /// The store's directory.
    public let directory: String
    public let options: Options
    let backend: any StoreBackend
    let logger: Logger
    let notifier: ChangeNotifier
    let layout = StoreLayout()
    /// Parsed schemas by their id in `realm_schema`: per-user Realms share a few.
    private let schemas = Mutex<[Int64: Schema]>([:])
    /// The ids of schemas' JSON texts (a load gives each of many new Realms the same schema)
    /// and of sources' names, from the tables that store each once.
    private let schemaIds = Mutex<[String: Int64]>([:])
    private let sourceIds = Mutex<[String: Int64]>([:])
    /// The last few schemas committed, with their ids: a Realm given one of them is found by
    /// `==` (quick for a schema shared by many Realms), without writing its JSON text again.
    private let recentSchemas = Mutex<[(schema: Schema, id: Int64)]>([])
    /// Compiled path filters of the adapters that record changes, by pattern.
    let pathFilters = Mutex<[String: PathFilter?]>([:])

    /// Opens the store in `directory`, creating the directory and the store if missing.
    ///
    /// - Throws: `storeUnavailable` if the directory cannot be created or the database cannot
    ///   be opened (permissions, a file that is not a store, a disk error).
    public init(directory: String, options: Options = Options(), logger: Logger = Logger(label: "realm-adapter.store"))
        throws
    {
        self.directory = directory
        self.options = options
        self.logger = logger
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw RealmAdapterError.storeDirectory(directory, error)
        }
        backend = try SQLiteBackend.open(directory: directory, options: options, logger: logger)
        notifier = ChangeNotifier(backend: backend, interval: options.pollInterval, logger: logger)
    }

    /// A store on `backend` (a database of its own), named `location` in messages.
    package init(
        backend: any StoreBackend, location: String, options: Options = Options(),
        logger: Logger = Logger(label: "realm-adapter.store")
    ) {
        self.directory = location
        self.options = options
        self.logger = logger
        self.backend = backend
        notifier = ChangeNotifier(backend: backend, interval: options.pollInterval, logger: logger)
    }

    /// The store's engine: `sqlite` (a directory), `postgres` (a database).
    public var engine: String { backend.engine }

    /// Throws the store's error when it cannot be read now (its database down or unreachable).
    public func checkReachable() throws {
        _ = try read { db in try Int64.fetchOne(db, sql: "SELECT 1") }
    }

    /// The store's database file in `directory`.
    static func file(in directory: String) -> String { (directory as NSString).appendingPathComponent("realms.sqlite") }

    /// Whether `directory` holds a store (reading commands refuse, or say so, rather than make one).
    public static func exists(in directory: String) -> Bool {
        FileManager.default.fileExists(atPath: file(in: directory))
    }

    // MARK: Realms

    /// The paths of all Realms in the store, sorted.
    public func realmPaths() throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT path FROM realm ORDER BY path") }
    }

    /// The paths of the Realms under `directory` (`/<user id>`), sorted: a range of the path
    /// index, not a scan of every Realm.
    public func realmPaths(under directory: String) throws -> [String] {
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        // Paths under base/ sort from base + "/" up to, not including, base + "0" ("/" + 1).
        return try read { db in
            try String.fetchAll(
                db, sql: "SELECT path FROM realm WHERE path > ? AND path < ? ORDER BY path",
                arguments: [base + "/", base + "0"])
        }
    }

    /// Whether a Realm exists at `path`.
    public func contains(_ path: String) throws -> Bool {
        try read { db in try Self.realmRow(db, path) != nil }
    }

    /// The latest version of the Realm at `path` (0 for an empty Realm).
    public func version(of path: String) throws -> Int64 {
        try read { db in try Self.requireRealm(db, path).version }
    }

    /// The schema of the Realm at `path`.
    public func schema(of path: String) throws -> Schema {
        try read { db in try schema(db, try Self.requireRealm(db, path)) }
    }

    /// Paths as a JSON array, for statements over many Realms at once (``StoreDialect/jsonArrayElements(_:as:)``).
    static func jsonArray(_ paths: [String]) -> String { JSONValue.array(paths.map(JSONValue.string)).serialized() }

    /// Pairs of a path and a number as a JSON array of `[path, number]` (``StoreDialect/jsonElement(_:_:integer:)``:
    /// element 0 and element 1).
    static func jsonArray(_ pairs: [(path: String, number: Int64)]) -> String {
        JSONValue.array(pairs.map { .array([.string($0.path), .int($0.number)]) }).serialized()
    }

    /// Removes a Realm with its objects, history and adapter cursors.
    public func deleteRealm(_ path: String) throws {
        try write { db in
            let r = try Self.requireRealm(db, path)
            for t in try layout.allTables(db: db) {
                try db.execute(sql: "DELETE FROM \(t) WHERE realm = ?", arguments: [r.id])
            }
            for table in ["history", "source_position", "adapter_cursor", "object_change"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE realm_id = ?", arguments: [r.id])
            }
            try db.execute(sql: "DELETE FROM realm WHERE id = ?", arguments: [r.id])
        }
    }

    // MARK: Internals shared by reads and writes

    struct RealmRow {
        var id: Int64
        var path: String
        /// The Realm's schema in `realm_schema`; 0 for the empty schema of a new Realm.
        var schemaId: Int64
        var version: Int64
        var compactedThrough: Int64
    }

    /// The Realm's row (every write reads it, once per Realm).
    static func realmRow(_ db: any StoreConnection, _ path: String) throws -> RealmRow? {
        let stmt = try db.cachedStatement(
            sql: "SELECT id, schema_id, version, compacted_through FROM realm WHERE path = ?")
        stmt.reset()
        try stmt.bind(.text(path), at: 1)
        defer { stmt.reset() }
        guard try stmt.step() else { return nil }
        return RealmRow(
            id: stmt.int64(0), path: path, schemaId: stmt.int64(1), version: stmt.int64(2),
            compactedThrough: stmt.int64(3))
    }

    static func requireRealm(_ db: any StoreConnection, _ path: String) throws -> RealmRow {
        try RealmPath.validate(path)
        guard let r = try realmRow(db, path) else {
            throw RealmAdapterError.realmNotFound(path)
        }
        return r
    }

    /// The parsed schema of a Realm.
    func schema(_ db: any StoreConnection, _ r: RealmRow) throws -> Schema { try schema(db, id: r.schemaId) }

    /// The schema stored as `id` in `realm_schema`, parsed once per store (0 is the empty one).
    func schema(_ db: any StoreConnection, id: Int64) throws -> Schema {
        if id == 0 { return .empty }
        if let s = schemas.withLock({ $0[id] }) { return s }
        let sql = "SELECT json FROM realm_schema WHERE id = ?"
        guard let json = try String.fetchOne(db.cachedStatement(sql: sql), arguments: [id]) else {
            throw RealmAdapterError.storedSchemaMissing(id, directory: directory)
        }
        let s = try Schema(json: try JSONValue(parsing: json, errorCode: .storeUnavailable), path: "stored schema")
        cache(s, id: id)
        return s
    }

    /// Caches a schema by its id (`schemas` stays bounded: Realms whose schemas all differ).
    func cache(_ schema: Schema, id: Int64) {
        schemas.withLock { cached in
            if cached.count >= 1_000 { cached.removeAll() }
            cached[id] = schema
        }
    }

    /// Drops the schemas and sources known by id (after a write transaction that failed: the ids
    /// it gave are free again).
    func forgetStoredIds() {
        schemas.withLock { $0.removeAll() }
        schemaIds.withLock { $0.removeAll() }
        sourceIds.withLock { $0.removeAll() }
        recentSchemas.withLock { $0.removeAll() }
    }

    /// The id of `schema` if it is one of the last few committed (see ``recentSchemas``).
    func recentSchemaId(_ schema: Schema) -> Int64? {
        recentSchemas.withLock { recent in recent.first { $0.schema == schema }?.id }
    }

    /// Remembers a committed schema's id for ``recentSchemaId(_:)`` (the newest first, eight at most).
    func rememberRecent(_ schema: Schema, id: Int64) {
        recentSchemas.withLock { recent in
            recent.removeAll { $0.id == id }
            recent.insert((schema, id), at: 0)
            if recent.count > 8 { recent.removeLast() }
        }
    }

    /// Whether this process stored or found the schema of this JSON text (checked before it was stored).
    func knowsSchema(_ json: String) -> Bool { schemaIds.withLock { $0[json] != nil } }

    /// The id of a schema's JSON text in `realm_schema`, added if new (inside a write transaction).
    func schemaId(_ db: any StoreConnection, json: String) throws -> Int64 {
        try Self.interned(json, in: "realm_schema", column: "json", cache: schemaIds, db: db)
    }

    /// The id of a source's name in `source`, added if new (inside a write transaction).
    func sourceId(_ db: any StoreConnection, _ source: String) throws -> Int64 {
        try Self.interned(source, in: "source", column: "name", cache: sourceIds, db: db)
    }

    /// The id of `value` in a table that stores each value once (`id`, a unique `column`).
    private static func interned(
        _ value: String, in table: String, column: String,
        cache: borrowing Mutex<[String: Int64]>, db: any StoreConnection
    ) throws -> Int64 {
        if let id = cache.withLock({ $0[value] }) { return id }
        let query = "SELECT id FROM \(table) WHERE \(column) = ?"
        var id = try Int64.fetchOne(db.cachedStatement(sql: query), arguments: [value])
        if id == nil {
            try db.cachedStatement(sql: "INSERT INTO \(table) (\(column)) VALUES (?)").execute(arguments: [value])
            id = db.lastInsertedRowID
        }
        cache.withLock { ids in
            if ids.count >= 1_000 { ids.removeAll() }
            ids[value] = id
        }
        return id!
    }

    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        do { return try backend.read(body) } catch let e as StoreError { throw Self.wrap(e) }
    }

    /// A write transaction, its database's errors in the store's terms.
    func write<T>(_ durability: StoreDurability = .asOpened, _ body: (any StoreConnection) throws -> T) throws -> T {
        do { return try backend.write(durability, body) } catch let e as StoreError { throw Self.wrap(e) }
    }

    static func wrap(_ e: StoreError) -> RealmAdapterError {
        RealmAdapterError.storeFailed(e)
    }
}
