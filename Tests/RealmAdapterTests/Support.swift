import Foundation
import PostgresStore
import PostgresWire
import Testing

@testable import RealmAdapter

/// The store's backends its suites run on: SQLite always, Postgres when `scripts/test.sh` has
/// started the test server (`REALM_ADAPTER_PG_PORT`); in CI (`CI=true`) it must have.
enum StoreKind: String, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static var all: [StoreKind] {
        let environment = ProcessInfo.processInfo.environment
        return environment["REALM_ADAPTER_PG_PORT"] != nil || environment["CI"] == "true"
            ? [.sqlite, .postgres] : [.sqlite]
    }

    var testDescription: String { rawValue }

    /// The test server's settings (from `scripts/pg.sh`'s environment), in `database`.
    static func postgres(database: String) -> PostgresSettings {
        let environment = ProcessInfo.processInfo.environment
        return PostgresSettings(
            host: environment["REALM_ADAPTER_PG_HOST"] ?? "127.0.0.1",
            port: Int(environment["REALM_ADAPTER_PG_PORT"] ?? "") ?? 54329,
            user: environment["REALM_ADAPTER_PG_USER"] ?? "postgres", database: database)
    }
}

/// A fresh store per test, removed when the value goes away: a directory for SQLite, a
/// database of its own for Postgres.
final class TemporaryStore {
    let directory: String
    let store: RealmStore
    private var database: String?
    private var backend: PostgresBackend?

    init(_ kind: StoreKind = .sqlite, _ name: String = #function) throws {
        let tag = "\(name.filter { $0.isLetter || $0.isNumber }.prefix(40))-\(UUID().uuidString.prefix(8))"
        directory = NSTemporaryDirectory() + "realm-adapter-tests/" + tag
        switch kind {
        case .sqlite:
            store = try RealmStore(directory: directory)
        case .postgres:
            let database = "s_" + tag.lowercased().filter { $0.isLetter || $0.isNumber }
            let admin = try PostgresConnection.connectSync(StoreKind.postgres(database: "postgres"))
            defer { admin.close() }
            try admin.sessionSync { s in try s.execute("CREATE DATABASE \(database)") }
            let backend = try PostgresBackend.open(StoreKind.postgres(database: database), logger: .init(label: "test"))
            (self.database, self.backend) = (database, backend)
            store = RealmStore(backend: backend, location: database)
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
        guard let database, let backend else { return }
        backend.close()
        if let admin = try? PostgresConnection.connectSync(StoreKind.postgres(database: "postgres")) {
            _ = try? admin.sessionSync { s in try s.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
            admin.close()
        }
    }

    /// Applies a JSON transaction to the Realm at `path` as `realm apply` reads one (typed
    /// against the Realm's schema, its own schema changes followed).
    @discardableResult
    func applyJSON(_ json: String, to path: String) throws -> Int64 {
        let schema = try store.contains(path) ? try store.schema(of: path) : .empty
        let instructions = try Instruction.decodeTransaction(
            try JSONValue(parsing: json, errorCode: .invalidInstruction), schema: schema)
        return try store.apply(instructions, to: path, origin: "test")
    }
}

/// A schema exercising every property kind.
let taskSchema: [ObjectSchema] = [
    ObjectSchema(
        name: "Person", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.string)),
            Property(name: "name", type: .scalar(.string), isOptional: true),
        ]),
    ObjectSchema(
        name: "Task", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.int)),
            Property(name: "title", type: .scalar(.string)),
            Property(name: "done", type: .scalar(.bool), defaultValue: false),
            Property(name: "owner", type: .link("Person")),
            Property(name: "watchers", type: .list(.link("Person"))),
            Property(name: "tags", type: .list(.scalar(.string))),
            Property(name: "due", type: .scalar(.date), isOptional: true),
            Property(name: "cost", type: .scalar(.decimal), isOptional: true),
            Property(name: "blob", type: .scalar(.data), isOptional: true),
            Property(name: "ratio", type: .scalar(.float), isOptional: true),
            Property(name: "score", type: .scalar(.double), isOptional: true),
            Property(name: "ref", type: .scalar(.uuid), isOptional: true),
            Property(name: "oid", type: .scalar(.objectId), isOptional: true),
        ]),
    ObjectSchema(
        name: "Note",
        properties: [
            Property(name: "text", type: .scalar(.string))
        ]),
]

extension RealmStore {
    /// Creates the test schema in a Realm.
    func addTaskSchema(_ path: String) throws {
        try apply(taskSchema.map(Instruction.addType), to: path, origin: "test")
    }
}
