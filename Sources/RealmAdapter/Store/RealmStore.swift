import Foundation
import GRDB
import GRDBSQLite
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
    let pool: DatabasePool
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
        var config = GRDB.Configuration()
        let seconds =
            Double(options.busyTimeout.components.seconds) + Double(options.busyTimeout.components.attoseconds) / 1e18
        config.busyMode = .timeout(seconds)
        let synchronous = options.durable ? "FULL" : "NORMAL"
        config.prepareDatabase { db in
            // For a new store (an existing one keeps its own): half the page writes and reads of
            // SQLite's default 4 KB for bulk loads and history blobs; small commits stay small.
            try db.execute(sql: "PRAGMA page_size = 8192")
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
        let file = Self.file(in: directory)
        pool = try Self.open(file, directory: directory, configuration: config)
        notifier = ChangeNotifier(pool: pool, interval: options.pollInterval, logger: logger)
    }

    /// The store's database file in `directory`.
    static func file(in directory: String) -> String { (directory as NSString).appendingPathComponent("realms.sqlite") }

    /// Whether `directory` holds a store (reading commands refuse, or say so, rather than make one).
    public static func exists(in directory: String) -> Bool {
        FileManager.default.fileExists(atPath: file(in: directory))
    }

    /// Opens the pool and brings the store to the current layout. Processes that open a new
    /// store at the same instant (two daemons started together) collide while one creates it:
    /// a lock held past the busy handler's reach, a migration the other recorded first, or one
    /// that finds the other's half done (each migration is a transaction of its own). Such a
    /// collision is tried again, briefly, and then finds the store made.
    static func open(_ file: String, directory: String, configuration: GRDB.Configuration) throws -> DatabasePool {
        var attempt = 0
        while true {
            do {
                let pool = try DatabasePool(path: file, configuration: configuration)
                try migrator.migrate(pool)
                return pool
            } catch let e as DatabaseError
                where [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_CONSTRAINT, .SQLITE_SCHEMA, .SQLITE_ERROR].contains(
                    e.resultCode)
                && attempt < 40
            {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.01 * Double(min(attempt, 10)))
            } catch let e as DatabaseError {
                throw RealmAdapterError.storeOpen(file, directory: directory, e)
            }
        }
    }

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS realm (
                        id INTEGER PRIMARY KEY,
                        path TEXT NOT NULL UNIQUE,
                        schema TEXT NOT NULL,
                        schema_version INTEGER NOT NULL DEFAULT 0,
                        version INTEGER NOT NULL DEFAULT 0,
                        compacted_through INTEGER NOT NULL DEFAULT 0,
                        created_at INTEGER NOT NULL);
                    CREATE TABLE IF NOT EXISTS history (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        realm_id INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        origin TEXT NOT NULL,
                        committed_at INTEGER NOT NULL,
                        instruction_count INTEGER NOT NULL,
                        instructions BLOB NOT NULL,
                        UNIQUE (realm_id, version));
                    CREATE TABLE IF NOT EXISTS source_position (
                        realm_id INTEGER NOT NULL,
                        source TEXT NOT NULL,
                        position TEXT NOT NULL,
                        PRIMARY KEY (realm_id, source)) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS adapter (
                        name TEXT PRIMARY KEY,
                        path_regex TEXT NOT NULL,
                        registered_at INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS adapter_cursor (
                        adapter TEXT NOT NULL,
                        realm_id INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        PRIMARY KEY (adapter, realm_id)) WITHOUT ROWID;
                    """)
        }
        // Migrations are idempotent: two processes opening a new store at the same instant
        // (two daemons started together) may both run one.
        m.registerMigration("v2: metadata") { db in
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        }
        // Each transaction written for a connector keeps the source position it came from, so a
        // transaction applied twice shows in history (the same position twice), not only in values.
        m.registerMigration("v3: history source position") { db in
            let columns = try db.columns(in: "history").map(\.name)
            if !columns.contains("source") { try db.execute(sql: "ALTER TABLE history ADD COLUMN source TEXT") }
            if !columns.contains("position") { try db.execute(sql: "ALTER TABLE history ADD COLUMN position TEXT") }
        }
        m.registerMigration("v4: tables by type, shared by the Realms") { db in try StoreLayout.upgrade(db) }
        m.registerMigration("v5: schemas shared by the Realms") { db in try Self.shareSchemas(db) }
        m.registerMigration("v6: adapter cursors by adapter id") { db in try Self.numberAdapters(db) }
        m.registerMigration("v7: source positions by source id") { db in try Self.numberSources(db) }
        m.registerMigration("v8: objects before each change, for change sets") { db in try Self.addChangeRecording(db) }
        m.registerMigration("v9: source positions for the whole store") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS source_floor (
                        source TEXT NOT NULL, origin TEXT NOT NULL, position TEXT NOT NULL,
                        PRIMARY KEY (source, origin)) WITHOUT ROWID
                    """)
        }
        return m
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

    /// Paths as a JSON array, for statements over many Realms at once (`json_each`).
    static func jsonArray(_ paths: [String]) -> String { JSONValue.array(paths.map(JSONValue.string)).serialized() }

    /// Pairs of a path and a number as a JSON array of `[path, number]` (`json_each`, with
    /// `value ->> 0` and `value ->> 1`).
    static func jsonArray(_ pairs: [(path: String, number: Int64)]) -> String {
        JSONValue.array(pairs.map { .array([.string($0.path), .int($0.number)]) }).serialized()
    }

    /// Removes a Realm with its objects, history and adapter cursors.
    public func deleteRealm(_ path: String) throws {
        try pool.write { db in
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

    /// The Realm's row, read through SQLite's API (every write reads it, once per Realm: GRDB's
    /// rows cost several times the query).
    static func realmRow(_ db: Database, _ path: String) throws -> RealmRow? {
        let sql = "SELECT id, schema_id, version, compacted_through FROM realm WHERE path = ?"
        let stmt = try db.cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(stmt)
        defer { sqlite3_reset(stmt) }
        var copy = path
        let bound = copy.withUTF8 { sqlite3_bind_text(stmt, 1, $0.baseAddress, Int32($0.count), RealmTables.transient) }
        guard bound == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: bound)) }
        switch sqlite3_step(stmt) {
        case SQLITE_ROW:
            return RealmRow(
                id: sqlite3_column_int64(stmt, 0), path: path, schemaId: sqlite3_column_int64(stmt, 1),
                version: sqlite3_column_int64(stmt, 2), compactedThrough: sqlite3_column_int64(stmt, 3))
        case SQLITE_DONE: return nil
        case let rc:
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: message)
        }
    }

    static func requireRealm(_ db: Database, _ path: String) throws -> RealmRow {
        try RealmPath.validate(path)
        guard let r = try realmRow(db, path) else {
            throw RealmAdapterError.realmNotFound(path)
        }
        return r
    }

    /// The parsed schema of a Realm.
    func schema(_ db: Database, _ r: RealmRow) throws -> Schema { try schema(db, id: r.schemaId) }

    /// The schema stored as `id` in `realm_schema`, parsed once per store (0 is the empty one).
    func schema(_ db: Database, id: Int64) throws -> Schema {
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
    func schemaId(_ db: Database, json: String) throws -> Int64 {
        try Self.interned(json, in: "realm_schema", column: "json", cache: schemaIds, db: db)
    }

    /// The id of a source's name in `source`, added if new (inside a write transaction).
    func sourceId(_ db: Database, _ source: String) throws -> Int64 {
        try Self.interned(source, in: "source", column: "name", cache: sourceIds, db: db)
    }

    /// The id of `value` in a table that stores each value once (`id`, a unique `column`).
    private static func interned(
        _ value: String, in table: String, column: String,
        cache: borrowing Mutex<[String: Int64]>, db: Database
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

    /// Migration v7: sources' names are stored once, and each Realm's positions name them by number.
    static func numberSources(_ db: Database) throws {
        // Done already (by another process opening the store at the same time).
        guard try db.columns(in: "source_position").contains(where: { $0.name == "source" }) else { return }
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS source (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
                INSERT OR IGNORE INTO source (name) SELECT DISTINCT source FROM source_position;
                """)
        try rebuild(
            "source_position",
            as: """
                (realm_id INTEGER NOT NULL, source_id INTEGER NOT NULL, position TEXT NOT NULL,
                 PRIMARY KEY (realm_id, source_id)) WITHOUT ROWID
                """,
            from: "SELECT p.realm_id, s.id, p.position FROM source_position p JOIN source s ON s.name = p.source",
            db)
    }

    /// Migration v6: adapters get a number, and their cursors (one per Realm) name them by it.
    static func numberAdapters(_ db: Database) throws {
        // Done already (by another process opening the store at the same time).
        guard try db.columns(in: "adapter_cursor").contains(where: { $0.name == "adapter" }) else { return }
        try rebuild(
            "adapter",
            as: """
                (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, path_regex TEXT NOT NULL,
                 registered_at INTEGER NOT NULL)
                """, from: "SELECT NULL, name, path_regex, registered_at FROM adapter", db)
        try rebuild(
            "adapter_cursor",
            as: """
                (adapter_id INTEGER NOT NULL, realm_id INTEGER NOT NULL, version INTEGER NOT NULL,
                 PRIMARY KEY (adapter_id, realm_id)) WITHOUT ROWID
                """,
            from: """
                SELECT a.id, c.realm_id, c.version FROM adapter_cursor c JOIN adapter a ON a.name = c.adapter
                """, db)
    }

    /// Migration v5: each distinct schema stored once, in `realm_schema`, and Realms refer to it
    /// by id (per-user Realms share one schema: a copy in each of 100,000 rows took 11 MB).
    static func shareSchemas(_ db: Database) throws {
        // Done already (by another process opening the store at the same time).
        guard try db.columns(in: "realm").contains(where: { $0.name == "schema" }) else { return }
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS realm_schema (id INTEGER PRIMARY KEY, json TEXT NOT NULL UNIQUE);
                INSERT OR IGNORE INTO realm_schema (json) SELECT DISTINCT schema FROM realm WHERE schema <> '[]';
                """)
        try rebuild(
            "realm",
            as: """
                (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, schema_id INTEGER NOT NULL DEFAULT 0,
                 version INTEGER NOT NULL DEFAULT 0, compacted_through INTEGER NOT NULL DEFAULT 0,
                 created_at INTEGER NOT NULL)
                """,
            from: """
                SELECT r.id, r.path, coalesce(s.id, 0), r.version, r.compacted_through, r.created_at
                FROM realm r LEFT JOIN realm_schema s ON s.json = r.schema
                """, db)
    }

    /// Replaces `table` by one of `definition` (its columns and keys, and table options) holding
    /// the rows `select` gives (in the new columns' order): SQLite cannot change a key or drop a
    /// column in place.
    private static func rebuild(_ table: String, as definition: String, from select: String, _ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE \(table)_rebuilt \(definition);
                INSERT INTO \(table)_rebuilt \(select);
                DROP TABLE \(table);
                ALTER TABLE \(table)_rebuilt RENAME TO \(table);
                """)
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try pool.read(body) } catch let e as DatabaseError { throw Self.wrap(e) }
    }

    static func wrap(_ e: DatabaseError) -> RealmAdapterError {
        RealmAdapterError.storeFailed(e)
    }
}
