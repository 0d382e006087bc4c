import Foundation
import Logging

/// The one JSON file that configures the loader and the daemon (README: The configuration file).
///
/// Option names follow the legacy connectors in camelCase. Every mistake is an error naming
/// its JSON path (`database.retry.attempts: expected an integer, found a string.`), unknown keys
/// included, and the password is never printed: see ``DatabaseConfiguration/password``.
///
/// ```swift
/// let config = try Configuration.load(file: "adapter.json", connectors: connectors)
/// ```
public struct Configuration: Sendable {
    public var realm: RealmConfiguration
    /// Absent for a configuration that only works on the embedded store.
    public var database: DatabaseConfiguration?
    /// Empty when the configuration has none and the command needs none (`serve`: a Realm
    /// carries its own schema).
    public var schema: Schema
    public var mapping: MappingConfiguration
    public var loader: LoaderConfiguration
    /// Legacy `ignoreSQLerrors`: a change the database rejects goes to the dead-letter record
    /// and sync goes on, instead of stopping with the change kept for retry.
    public var ignoreSQLErrors: Bool
    public var logLevel: Logger.Level
    /// Also write logs to this file.
    public var logFile: String?
    /// `logFormat`: `text` (default) or `json`.
    public var logFormat = LogFormat.text
    /// `events`: webhooks that change events go to.
    public var events = EventsConfiguration()
    /// `server.metricsPort`: where `run` and `events` serve `/metrics` and `/health/*` (none by default).
    public var metricsPort: Int?
    /// `server.metricsHost`: the address they listen on (default `127.0.0.1`).
    public var metricsHost = "127.0.0.1"
    /// `server`: `realm-adapter serve`.
    public var server = ServerConfiguration()

    /// Reads and checks a configuration file. Relative paths inside it (the store directory,
    /// the log file) are resolved against the file's directory. `connectors` decode the
    /// `database` section (a configuration without one needs none). Without `needsSchema`, the
    /// `schema` section may be absent, and nothing is checked about syncing.
    public static func load(
        file: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        connectors: ConnectorRegistry = ConnectorRegistry(), needsSchema: Bool = true
    ) throws -> Configuration {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RealmAdapterError.configurationUnreadable(file)
        }
        do {
            var config = try Configuration(
                json: try JSONValue(parsing: data), environment: environment,
                connectors: connectors, needsSchema: needsSchema)
            let base = URL(fileURLWithPath: file).deletingLastPathComponent()
            if !config.realm.storeIsDatabase { config.realm.store = Self.resolve(config.realm.store, against: base) }
            config.logFile = config.logFile.map { Self.resolve($0, against: base) }
            return config
        } catch let e as RealmAdapterError {
            throw e.adding(["file": file])
        }
    }

    static func resolve(_ path: String, against base: URL) -> String {
        path.hasPrefix("/") ? path : base.appendingPathComponent(path).standardizedFileURL.path
    }

    public init(
        json: JSONValue, environment: [String: String] = ProcessInfo.processInfo.environment,
        connectors: ConnectorRegistry = ConnectorRegistry(), needsSchema: Bool = true
    ) throws {
        var r = try JSONObjectReader(json, path: "", code: .invalidConfiguration)
        if let schemaJSON = r.value("schema") {
            schema = try Schema(json: schemaJSON, path: "schema", code: .invalidConfiguration)
        } else if needsSchema {
            throw r.error("schema", "is required: the Realm object types to sync, in Realm JS model syntax.")
        } else {
            schema = .empty
        }
        guard let realmReader = try r.object("realm") else {
            throw r.error("realm", "is required (at least realm.path).")
        }
        realm = try RealmConfiguration(realmReader, environment: environment)
        database = try r.object("database").map {
            try DatabaseConfiguration($0, environment: environment, connectors: connectors)
        }
        mapping = try MappingConfiguration(try r.object("mapping"), schema: schema)
        loader = try LoaderConfiguration(try r.object("loader"))
        ignoreSQLErrors = try r.bool("ignoreSQLErrors") ?? false
        let level = try r.string("logLevel") ?? "info"
        guard let parsed = Self.logLevel(level) else {
            throw r.error(
                "logLevel",
                "unknown level '\(level)' (expected trace, debug, info, notice, warning, error or critical).")
        }
        logLevel = parsed
        logFile = try r.string("logFile")
        if let format = try r.string("logFormat") {
            guard let f = LogFormat(rawValue: format) else {
                throw r.error("logFormat", "unknown format '\(format)' (expected text or json).")
            }
            logFormat = f
        }
        events = try EventsConfiguration(try r.object("events"), environment: environment)
        if var server = try r.object("server") {
            metricsPort = try server.int("metricsPort", in: 1...65535)
            metricsHost = try server.string("metricsHost") ?? metricsHost
            self.server = try ServerConfiguration(&server)
            try server.finish()
        }
        try r.finish()
        if needsSchema { try check() }
    }

    /// Parses a swift-log level name, accepting the legacy winston names too.
    public static func logLevel(_ name: String) -> Logger.Level? {
        switch name.lowercased() {
        case "warn": .warning
        case "verbose": .debug
        case "silly": .trace
        default: Logger.Level(rawValue: name.lowercased())
        }
    }

    /// Cross-checks between sections.
    func check() throws {
        if let d = database, schema.types.isEmpty, !d.applyRealmSchemaChanges {
            throw RealmAdapterError.nothingToSync()
        }
        if let regex = realm.pathRegex, realm.path.isLiteral {
            guard try PathFilter(regex).matches(realm.path.template) else {
                throw RealmAdapterError.pathRegexMismatch(regex, path: "\(realm.path)")
            }
        }
    }
}

/// `realm`: where the Realms live and which of them sync.
public struct RealmConfiguration: Sendable {
    /// Where the Realms are kept: the embedded store's directory (default `./realms`, relative
    /// to the config file), or a Postgres database's URL (`postgresql://user@host/db`), its
    /// password removed (into ``storePassword``).
    public var store: String
    /// The store database's password: from its URL or from the environment variable named by
    /// `storePasswordEnv`. Nil for a directory.
    public var storePassword: Secret?

    /// Whether ``store`` names a Postgres database rather than a directory.
    public var storeIsDatabase: Bool { Self.isDatabaseURL(store) }

    /// `postgresql://…` or `postgres://…`.
    public static func isDatabaseURL(_ store: String) -> Bool {
        store.hasPrefix("postgresql://") || store.hasPrefix("postgres://")
    }
    /// Where database rows go: a literal path or a template over the row's columns.
    public var path: RealmPathTemplate
    /// Which Realms sync back to the database (legacy `realmRegex`); derived from `path` when absent.
    public var pathRegex: String?
    /// The adapter's name: its cursors and its origin tag (default `realm-adapter`).
    public var adapterName: String

    /// The path filter in force: `pathRegex`, or the one derived from `path`.
    public var effectivePathRegex: String { pathRegex ?? path.defaultRegex }

    init(_ reader: JSONObjectReader, environment: [String: String]) throws {
        var r = reader
        store = try r.string("store") ?? "./realms"
        let passwordEnv = try r.string("storePasswordEnv")
        if Self.isDatabaseURL(store) {
            // Keep the secret out of the URL, which is printed in messages.
            let url: ConnectionString
            do { url = try ConnectionString(store) } catch let e as RealmAdapterError {
                throw r.error("store", e.message)
            }
            store = url.withoutPassword
            storePassword = url.password.map(Secret.init)
            if let passwordEnv {
                guard storePassword == nil else {
                    throw r.error("storePasswordEnv", "the store's URL has a password too; keep one.")
                }
                storePassword = try r.secret(fromVariable: passwordEnv, at: "storePasswordEnv", in: environment)
            }
        } else if passwordEnv != nil {
            throw r.error("storePasswordEnv", "the store is a directory, not a postgresql:// URL: it has no password.")
        }
        path = try RealmPathTemplate(try r.requiredString("path"))
        pathRegex = try r.string("pathRegex")
        if let pathRegex { _ = try PathFilter(pathRegex).pattern }
        adapterName = try r.string("adapterName") ?? "realm-adapter"
        guard !adapterName.isEmpty else { throw r.error("adapterName", "must not be empty.") }
        try r.finish()
    }
}

/// `loader`: the bulk import (legacy `loaderSQLBatchSize`).
public struct LoaderConfiguration: Sendable {
    /// Rows per Realm transaction (default 1000).
    public var batchSize: Int
    /// What a foreign key whose target row is missing becomes.
    public var danglingForeignKeys: DanglingForeignKeys

    public enum DanglingForeignKeys: String, Sendable {
        /// Stop with an error naming table, column and key (default).
        case error
        /// Load the row with a null link and count a warning.
        case nullify
    }

    init(_ reader: JSONObjectReader?) throws {
        guard var r = reader else {
            batchSize = 1000
            danglingForeignKeys = .error
            return
        }
        batchSize = try r.int("batchSize", in: 1...1_000_000) ?? 1000
        let d = try r.string("danglingForeignKeys") ?? "error"
        guard let parsed = DanglingForeignKeys(rawValue: d) else {
            throw r.error("danglingForeignKeys", "expected \"error\" or \"nullify\", found \"\(d)\".")
        }
        danglingForeignKeys = parsed
        try r.finish()
    }
}
