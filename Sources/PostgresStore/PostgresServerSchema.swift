import Logging
import PostgresWire
import RealmAdapter

/// The server's tables (users, path permissions, revoked and admin tokens, permission offers,
/// one-time account tokens) in a Postgres store's database, beside the Realms: every `serve`
/// replica on the store sees the same users, tokens and permissions.
///
/// Names compare without regard to case, as in the embedded store's `server.sqlite` (`NOCASE`):
/// through a collation named `nocase`, which the server's SQL names where SQLite's does.
/// (SQLite's folds ASCII letters only, this one every letter.)
enum PostgresServerSchema {
    static func create(_ db: any StoreConnection) throws {
        try db.execute(
            sql: """
                CREATE COLLATION IF NOT EXISTS nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
                CREATE TABLE IF NOT EXISTS "user" (
                    id text COLLATE "C" PRIMARY KEY, name text COLLATE nocase NOT NULL UNIQUE,
                    password_hash text NOT NULL, is_admin bigint NOT NULL, created text NOT NULL,
                    generation bigint NOT NULL DEFAULT 0, provider text COLLATE "C" NOT NULL DEFAULT 'password',
                    email_confirmed bigint NOT NULL DEFAULT 1);
                CREATE TABLE IF NOT EXISTS permission (
                    path text COLLATE "C" NOT NULL, user_id text COLLATE "C" NOT NULL, level bigint NOT NULL,
                    PRIMARY KEY (path, user_id));
                CREATE TABLE IF NOT EXISTS revoked_token (id text COLLATE "C" PRIMARY KEY, expires bigint NOT NULL);
                CREATE TABLE IF NOT EXISTS admin_token (
                    name text COLLATE nocase PRIMARY KEY, id text COLLATE "C" NOT NULL UNIQUE, created text NOT NULL);
                CREATE TABLE IF NOT EXISTS offer (
                    id text COLLATE "C" PRIMARY KEY, path text COLLATE "C" NOT NULL, level bigint NOT NULL,
                    creator_id text COLLATE "C" NOT NULL, created bigint NOT NULL, expires bigint,
                    invalidated bigint NOT NULL DEFAULT 0);
                CREATE TABLE IF NOT EXISTS account_token (
                    id text COLLATE "C" PRIMARY KEY, user_id text COLLATE "C" NOT NULL,
                    purpose text COLLATE "C" NOT NULL, created bigint NOT NULL, expires bigint NOT NULL,
                    used bigint NOT NULL DEFAULT 0);
                """)
    }
}

extension PostgresBackend {
    /// The store's database at `settings`, with the server's tables made if missing.
    package static func openServer(_ settings: PostgresSettings, logger: Logger) throws -> PostgresBackend {
        let backend = try open(settings, logger: logger)
        try backend.write(.asOpened) { db in try PostgresServerSchema.create(db) }
        return backend
    }
}
