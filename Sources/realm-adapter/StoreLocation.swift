import Foundation
import Logging
import PostgresStore
import PostgresWire
import RealmAdapter
import RealmServer

/// Where a store is, as `realm.store` or `--store` gives it: a directory (the embedded SQLite
/// store) or a Postgres database's URL (`postgresql://…`, the store shared by many processes).
struct StoreLocation {
    /// The directory, or the URL without its password.
    let text: String
    let password: Secret?

    init(_ realm: RealmConfiguration) { (text, password) = (realm.store, realm.storePassword) }

    /// A `--store` given on the command line: a directory, or a URL whose password comes with it.
    init(commandLine store: String) throws {
        guard RealmConfiguration.isDatabaseURL(store) else {
            (text, password) = (store, nil)
            return
        }
        let url = try ConnectionString(store)
        (text, password) = (url.withoutPassword, url.password.map(Secret.init))
    }

    var isDatabase: Bool { RealmConfiguration.isDatabaseURL(text) }

    private var settings: PostgresSettings { PostgresSettings(url: text, password: password) }

    /// Whether a store is there (reading commands refuse, rather than make one in a wrong place).
    func exists(logger: Logger) throws -> Bool {
        guard isDatabase else { return RealmStore.exists(in: text) }
        return try reaching { try PostgresBackend.holdsStore(settings, logger: logger) }
    }

    /// Opens the store, making it if missing.
    func open(options: RealmStore.Options = RealmStore.Options(), logger: Logger) throws -> RealmStore {
        guard isDatabase else { return try RealmStore(directory: text, options: options, logger: logger) }
        let backend = try reaching { try PostgresBackend.open(settings, logger: logger) }
        return RealmStore(backend: backend, location: text, options: options, logger: logger)
    }

    /// `body`, its failures to reach the store's database said as such.
    fileprivate func reaching<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as PostgresError {
            throw RealmAdapterError.storeDatabaseUnavailable(text, e.detail ?? e.message)
        } catch let e as StoreError {
            throw RealmAdapterError.storeDatabaseUnavailable(text, e.message)
        }
    }
}

extension StoreLocation {
    /// The server's users, tokens and path permissions, kept beside the store.
    func userDirectory() throws -> UserDirectory {
        guard isDatabase else { return try UserDirectory(storeDirectory: text) }
        let logger = Logger(label: "realm-adapter.server-tables")
        return UserDirectory(backend: try reaching { try PostgresBackend.openServer(settings, logger: logger) })
    }
}

extension RealmAdapterError {
    /// The store's database could not be reached or set up.
    static func storeDatabaseUnavailable(_ url: String, _ reason: String) -> RealmAdapterError {
        let reason = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
        return RealmAdapterError(
            .storeUnavailable,
            "Cannot open the Realm store in the database \(url): \(reason). Check that the server runs, that the "
                + "database exists and that the user may create tables in it (the password comes from the URL or "
                + "realm.storePasswordEnv).",
            context: ["store": url])
    }
}
