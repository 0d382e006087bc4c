import Foundation

/// A secret (a password) that never shows in descriptions, logs or errors.
extension JSONObjectReader {
    /// The secret in the environment variable `variable`, which the key `key` names; an error
    /// at `key` that says what to do when it is not set.
    func secret(fromVariable variable: String, at key: String, in environment: [String: String]) throws -> Secret {
        guard let v = environment[variable] else {
            throw error(
                key, "the environment variable \(variable) is not set. Export it before starting, or remove \(key).")
        }
        return Secret(v)
    }
}

public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; pass it only to the database driver.
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "********" }
    public var debugDescription: String { "Secret(********)" }
}

/// `database`: which database to sync with and how to reach it.
///
/// The members every connector shares are here; a connector's own (Postgres: `slotName`,
/// `publication`, `sslmode`) are in ``settings``, decoded by the ``ConnectorFactory`` that
/// `type` names.
public struct DatabaseConfiguration: Sendable {
    public struct Retry: Sendable, Hashable {
        /// Attempts before giving up (default 10; 0 means retry forever).
        public var attempts: Int = 10
        /// The first delay (default 500 ms).
        public var delayMs: Int = 500
        /// Each delay is the previous times this (default 2).
        public var backoff: Double = 2
        /// Delays never exceed this (default 30 s).
        public var maxDelayMs: Int = 30_000

        public init() {}

        /// Sets the members a `retry` object of the configuration gives (the others stay).
        mutating func update(from reader: JSONObjectReader) throws {
            var rr = reader
            attempts = try rr.int("attempts", in: 0...1_000_000) ?? attempts
            delayMs = try rr.int("delayMs", in: 0...3_600_000) ?? delayMs
            backoff = try rr.double("backoff") ?? backoff
            maxDelayMs = try rr.int("maxDelayMs", in: 0...3_600_000) ?? maxDelayMs
            guard backoff >= 1 else { throw rr.error("backoff", "must be at least 1.") }
            try rr.finish()
        }

        /// The delay before attempt `n` (1-based; attempt 1 has none).
        public func delay(beforeAttempt n: Int) -> Duration {
            guard n > 1 else { return .zero }
            let ms = min(Double(maxDelayMs), Double(delayMs) * pow(backoff, Double(n - 2)))
            return .milliseconds(Int64(ms))
        }
    }

    /// `database.type`: the ``ConnectorFactory`` that reads and syncs this database (`postgres`).
    public var type: String
    /// A connection URL (`postgresql://user@host:5432/db?sslmode=require`) or libpq `key=value`
    /// pairs (``ConnectionString``); `database` and `sslmode` override its parts, and host, port
    /// and user cannot be given with it. A password in it is moved to ``password`` and removed.
    public var url: String?
    public var host: String?
    public var port: Int?
    public var user: String?
    /// The password, from `password` or from the environment variable named by `passwordEnv`.
    public var password: Secret?
    /// The environment variable the password came from, if any.
    public var passwordEnv: String?
    /// The database name.
    public var database: String?
    /// The database schema (namespace) of the synced tables (default: the connector's, such as
    /// `public` for Postgres or `dbo` for SQL Server).
    public var schema: String
    /// Seconds to wait for a connection (default 10).
    public var connectTimeout: Int
    public var retry: Retry
    /// Legacy `createPostgresDB` / `createSQLServerDB`.
    public var createDatabase: Bool
    /// Create tables, keys, foreign keys and link tables from the Realm schema.
    public var createSchema: Bool
    /// Legacy `applyRealmSchemaChangesToPostgres`: ADD_TYPE and ADD_PROPERTIES change the database too.
    public var applyRealmSchemaChanges: Bool
    /// A database transaction with more row changes than this reaches the Realms in parts of
    /// this many (each its own Realm transaction, still exactly once), so that memory stays
    /// bounded however large a transaction is (default 20,000).
    public var largeTransactionChanges: Int
    /// The connector's own settings, as its ``ConnectorFactory/settings(_:)`` decoded them.
    public var settings: any ConnectorSettings
    /// The port when neither ``port`` nor the URL gives one (the connector's).
    public var defaultPort: Int

    init(_ reader: JSONObjectReader, environment: [String: String], connectors: ConnectorRegistry) throws {
        var r = reader
        type = try r.requiredString("type")
        guard let factory = connectors.factory(forType: type) else {
            let expected = connectors.factories.isEmpty ? "this program knows none" : "expected \(connectors.typeList)"
            throw r.error("type", "unknown database type '\(type)' (\(expected)).")
        }
        defaultPort = factory.defaultPort
        url = try r.string("url")
        host = try r.string("host")
        port = try r.int("port", in: 1...65535)
        user = try r.string("user")
        database = try r.string("database")
        schema = try r.string("schema") ?? factory.defaultSchema
        connectTimeout = try r.int("connectTimeout", in: 1...3600) ?? 10
        password = nil
        passwordEnv = nil
        retry = Retry()
        createDatabase = false
        createSchema = false
        applyRealmSchemaChanges = false
        largeTransactionChanges = 20_000
        settings = try factory.settings(&r)
        try readPassword(&r, environment: environment)
        try readRetry(&r)
        createDatabase = try r.bool("createDatabase") ?? false
        createSchema = try r.bool("createSchema") ?? false
        applyRealmSchemaChanges = try r.bool("applyRealmSchemaChanges") ?? false
        largeTransactionChanges = try r.int("largeTransactionChanges", in: 1...100_000_000) ?? 20_000
        try r.finish()
        if factory.needsServer && url == nil && host == nil {
            throw r.error(nil, "give url or host to say where the database is.")
        }
    }

    /// `password`, `passwordEnv`, or the password in `url` (which is then removed from it).
    private mutating func readPassword(_ r: inout JSONObjectReader, environment: [String: String]) throws {
        let literal = try r.string("password")
        passwordEnv = try r.string("passwordEnv")
        if literal != nil && passwordEnv != nil {
            throw r.error("passwordEnv", "give either password or passwordEnv, not both.")
        }
        var inURL: String?
        if let u = url {
            // Keep the secret out of the URL (either form), which is printed in messages.
            let parsed: ConnectionString
            do { parsed = try ConnectionString(u) } catch let e as RealmAdapterError { throw r.error("url", e.message) }
            url = parsed.withoutPassword
            inURL = parsed.password
            // The fields would replace the URL's server or user while its password went along.
            for (key, field) in [("host", host), ("port", port.map(String.init)), ("user", user)] where field != nil {
                throw r.error(key, "give the server and user either in url or in host, port and user, not both.")
            }
        }
        if let inURL {
            guard literal == nil && passwordEnv == nil else {
                throw r.error("url", "the URL has a password and password or passwordEnv is given too; keep one.")
            }
            password = Secret(inURL)
        } else if let env = passwordEnv {
            password = try r.secret(fromVariable: env, at: "passwordEnv", in: environment)
        } else {
            password = literal.map(Secret.init)
        }
    }

    private mutating func readRetry(_ r: inout JSONObjectReader) throws {
        guard let rr = try r.object("retry") else { return }
        try retry.update(from: rr)
    }

    /// Where the database is, for messages: `host:port/database` without credentials.
    public var displayTarget: String {
        if let location = settings.location { return location }
        let u = url.flatMap { try? ConnectionString($0) }
        let h = host ?? u?.host ?? "localhost"
        let p = port ?? u?.port ?? defaultPort
        let d = database ?? u?.database ?? ""
        return "\(h):\(p)" + (d.isEmpty ? "" : "/\(d)")
    }
}
