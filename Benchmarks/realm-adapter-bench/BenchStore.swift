import Logging
import PostgresConnector
import PostgresStore
import RealmAdapter

/// A store where a benchmark's `realm.store` says: a directory, or a Postgres URL (`--postgres`).
enum BenchStore {
    static func open(_ location: String) throws -> RealmStore {
        guard RealmConfiguration.isDatabaseURL(location) else { return try RealmStore(directory: location) }
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let backend = try PostgresBackend.open(PostgresSettings(url: location, password: nil), logger: logger)
        return RealmStore(backend: backend, location: location, logger: logger)
    }

    /// The `realm.store` URL of `database`'s store (no password: the test server trusts local users).
    static func url(_ database: ScratchDatabase) -> String {
        let s = database.settings
        return "postgresql://\(s.user!)@\(s.host!):\(s.port ?? 5432)/\(s.database!)"
    }
}
