import Foundation
import PostgresConnector
import PostgresStore
import RealmAdapter
import Testing

/// The store a daemon test runs on: a directory (SQLite), or a database of the test server
/// (the Postgres store, issue 43), so that one test source checks the guarantees on both.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }
}

/// A store for one test: its `realm.store` text, the store as this process opens it, and what
/// removes it.
struct TestStore {
    let location: String
    let store: RealmStore
    private let database: String?
    private let backend: PostgresBackend?

    /// A store of `kind` in `directory` (SQLite) or in a fresh database (Postgres).
    init(_ kind: StoreKind, in directory: String, _ name: String = #function) async throws {
        switch kind {
        case .sqlite:
            location = directory + "/store"
            store = try RealmStore(directory: location)
            (database, backend) = (nil, nil)
        case .postgres:
            let (settings, database) = try await TestServer.freshDatabase("store" + name)
            location = "postgresql://\(settings.user!)@\(settings.host!):\(settings.port!)/\(database)"
            let backend = try PostgresBackend.open(settings, logger: .init(label: "test-store"))
            store = RealmStore(backend: backend, location: location)
            (self.database, self.backend) = (database, backend)
        }
    }

    /// Closes this process's connections and drops the store's database.
    func remove() async {
        backend?.close()
        if let database { await TestServer.drop(database) }
    }
}
