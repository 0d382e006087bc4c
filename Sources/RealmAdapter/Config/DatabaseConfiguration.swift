import Foundation

/// A secret (a password) that never shows in descriptions, logs or errors.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; pass it only to the database driver.
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "********" }
    public var debugDescription: String { "Secret(********)" }
}

/// `database`: which database to sync with and how to reach it.
public struct DatabaseConfiguration: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case postgres
        case sqlserver
    }

    /// SSL use, as libpq names it.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

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

        /// The delay before attempt `n` (1-based; attempt 1 has none).
        public func delay(beforeAttempt n: Int) -> Duration {
            guard n > 1 else { return .zero }
            let ms = min(Double(maxDelayMs), Double(delayMs) * pow(backoff, Double(n - 2)))
            return .milliseconds(Int64(ms))
        }
    }

    public var kind: Kind
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
    /// The database schema (namespace) of the synced tables: `public` (Postgres) or `dbo` (SQL Server) by default.
    public var schema: String
    public var sslmode: SSLMode?
    /// Seconds to wait for a connection (default 10).
    public var connectTimeout: Int
    public var retry: Retry
    /// Legacy `createPostgresDB` / `createSQLServerDB`.
    public var createDatabase: Bool
    /// Create tables, keys, foreign keys and link tables from the Realm schema.
    public var createSchema: Bool
    /// Legacy `applyRealmSchemaChangesToPostgres`: ADD_TYPE and ADD_PROPERTIES change the database too.
    public var applyRealmSchemaChanges: Bool
    /// Legacy `resetPostgresReplicationSlot`: drop and recreate the slot (starts over).
    public var resetReplicationSlot: Bool
    /// Postgres: the logical replication slot (default `realm_adapter`).
    public var slotName: String
    /// Postgres: the publication (default `realm_adapter`).
    public var publication: String
    /// `status` warns when the slot retains more WAL than this (default 1 GiB).
    public var walWarningBytes: Int64
    /// A database transaction with more row changes than this reaches the Realms in parts of
    /// this many (each its own Realm transaction, still exactly once), so that memory stays
    /// bounded however large a transaction is (default 20,000).
    public var largeTransactionChanges: Int

    init(_ reader: JSONObjectReader, environment: [String: String]) throws {
        var r = reader
        let type = try r.requiredString("type")
        guard let k = Kind(rawValue: type) else {
            throw r.error("type", "unknown database type '\(type)' (expected \(Kind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or "))).")
        }
        kind = k
        url = try r.string("url")
        host = try r.string("host")
        port = try r.int("port", in: 1...65535)
        user = try r.string("user")
        database = try r.string("database")
        schema = try r.string("schema") ?? (k == .postgres ? "public" : "dbo")
        if let s = try r.string("sslmode") {
            guard let m = SSLMode(rawValue: s) else {
                throw r.error("sslmode", "unknown mode '\(s)' (expected \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))).")
            }
            sslmode = m
        }
        connectTimeout = try r.int("connectTimeout", in: 1...3600) ?? 10
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
            guard let v = environment[env] else {
                throw r.error("passwordEnv", "the environment variable \(env) is not set. Export it before starting, or remove passwordEnv.")
            }
            password = Secret(v)
        } else {
            password = literal.map(Secret.init)
        }
        retry = Retry()
        if var rr = try r.object("retry") {
            retry.attempts = try rr.int("attempts", in: 0...1_000_000) ?? retry.attempts
            retry.delayMs = try rr.int("delayMs", in: 0...3_600_000) ?? retry.delayMs
            retry.backoff = try rr.double("backoff") ?? retry.backoff
            retry.maxDelayMs = try rr.int("maxDelayMs", in: 0...3_600_000) ?? retry.maxDelayMs
            guard retry.backoff >= 1 else { throw rr.error("backoff", "must be at least 1.") }
            try rr.finish()
        }
        createDatabase = try r.bool("createDatabase") ?? false
        createSchema = try r.bool("createSchema") ?? false
        applyRealmSchemaChanges = try r.bool("applyRealmSchemaChanges") ?? false
        resetReplicationSlot = try r.bool("resetReplicationSlot") ?? false
        slotName = try r.string("slotName") ?? "realm_adapter"
        // Postgres's own rule for slot names, checked before anything is created.
        guard (1...63).contains(slotName.utf8.count), slotName.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 95 }) else {
            throw r.error("slotName", "'\(slotName)' is not a replication slot name: use 1 to 63 lower-case letters, digits and underscores.")
        }
        publication = try r.string("publication") ?? "realm_adapter"
        // pgoutput reads publication_names as a list of identifiers: keep to names it reads back as they are.
        guard (1...63).contains(publication.utf8.count), publication.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 95 }) else {
            throw r.error("publication", "'\(publication)' is not a publication name the replication stream reads back: use 1 to 63 lower-case letters, digits and underscores.")
        }
        walWarningBytes = Int64(try r.int("walWarningBytes", in: 0...Int64.max) ?? 1 << 30)
        largeTransactionChanges = try r.int("largeTransactionChanges", in: 1...100_000_000) ?? 20_000
        try r.finish()
        if url == nil && host == nil {
            throw r.error(nil, "give url or host to say where the database is.")
        }
    }

    /// Where the database is, for messages: `host:port/database` without credentials.
    public var displayTarget: String {
        let u = url.flatMap { try? ConnectionString($0) }
        let h = host ?? u?.host ?? "localhost"
        let p = port ?? u?.port ?? (kind == .postgres ? 5432 : 1433)
        let d = database ?? u?.database ?? ""
        return "\(h):\(p)" + (d.isEmpty ? "" : "/\(d)")
    }
}
