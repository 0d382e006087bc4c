import Foundation
import GRDB
import Logging

/// The SQLite backend's migrations: each brings a store of an earlier release to the current
/// layout, in place. (A backend made later creates the current layout in one step.)
extension SQLiteBackend {
    /// Opens (or creates) the store's database in `directory`, at the current layout.
    static func open(directory: String, options: RealmStore.Options, logger: Logger) throws -> SQLiteBackend {
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
        let file = RealmStore.file(in: directory)
        let pool = try open(file, directory: directory, configuration: config)
        return SQLiteBackend(pool: pool, path: file, durable: options.durable, logger: logger)
    }

    /// Opens the pool and brings the store to the current layout. Processes that open a new
    /// store at the same instant (two daemons started together) collide while one creates it:
    /// a lock held past the busy handler's reach, a migration the other recorded first, or one
    /// that finds the other's half done or a later one made (each migration is a transaction of
    /// its own, and the list of those to run is read once, before the first). Such a collision
    /// (the store busy, or its migrations moved on while this one failed) is tried again,
    /// briefly, and then finds the store made; any other failure is reported at once.
    static func open(_ file: String, directory: String, configuration: GRDB.Configuration) throws -> DatabasePool {
        var attempt = 0
        // Each busy attempt may wait the whole busy timeout: the retries end by this time too.
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            var pool: DatabasePool?
            var before: Set<String>?
            func applied() -> Set<String>? { try? pool?.read { try migrator.appliedIdentifiers($0) } }
            do {
                pool = try DatabasePool(path: file, configuration: configuration)
                before = applied()
                try migrator.migrate(pool!)
                return pool!
            } catch {
                // Migrations report SQLite's errors as GRDB's, or as the store's where they run
                // the store's own statements (v4).
                let e = (error as? DatabaseError).map(StoreError.init) ?? error as? StoreError
                guard let e else { throw error }
                guard e.kind == .busy || (e.isCollision && applied() != before), attempt < 40,
                    ContinuousClock.now < deadline
                else {
                    throw RealmAdapterError.storeOpen(file, directory: directory, e)
                }
                attempt += 1
                Thread.sleep(forTimeInterval: 0.01 * Double(min(attempt, 10)))
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

    /// Migration v8: the before-images, and which adapters want them.
    static func addChangeRecording(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS object_change (
                    realm_id INTEGER NOT NULL, type TEXT NOT NULL, key NOT NULL, version INTEGER NOT NULL, before BLOB,
                    PRIMARY KEY (realm_id, type, key, version)) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS object_change_by_version ON object_change (realm_id, version);
                """)
        if try !db.columns(in: "adapter").contains(where: { $0.name == "records_changes" }) {
            try db.execute(sql: "ALTER TABLE adapter ADD COLUMN records_changes INTEGER NOT NULL DEFAULT 0")
        }
    }

}
