import Foundation
import GRDB
import RealmAdapter
import SQLiteConnector
import Testing

/// `realm-adapter init` on a SQLite file: the core's rules over what this connector reads.
@Suite struct SQLiteIntrospectionTests {
    @Test func aStartingConfigurationFromASQLiteFile() async throws {
        let file = NSTemporaryDirectory() + "realm-adapter-init-\(UUID().uuidString.prefix(8)).sqlite"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await DatabaseQueue(path: file).write { db in
            try db.execute(
                sql: """
                    CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, vip BOOLEAN, joined DATETIME);
                    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer (id), note TEXT);
                    CREATE TABLE log (line TEXT);
                    CREATE TABLE shape (id INTEGER PRIMARY KEY, outline GEOMETRY);
                    """)
        }
        let factory = SQLiteConnectorFactory()
        let description = try await factory.describe(
            try ConnectionString("sqlite://" + file), password: nil, schema: "main", logger: .init(label: "test"))
        let made = StartingConfiguration(description, factory: factory, url: nil, passwordEnv: nil)
        #expect(made.json["database"] == .object([.init("type", "sqlite"), .init("file", .string(file))]))
        let c = try Configuration(json: made.json, environment: [:], connectors: .sqlite)
        #expect(c.schema.types.map(\.name) == ["customer", "orders", "shape"])
        let customer = try #require(c.schema.types.first { $0.name == "customer" })
        #expect(customer.properties.map(\.typeString) == ["int", "string", "bool?", "date?"])
        let orders = try #require(c.schema.types.first { $0.name == "orders" })
        #expect(orders.properties.map(\.typeString) == ["int", "customer", "string?"], "the foreign key is a link")
        #expect(made.notes.contains("log: left out, because it has no primary key; synced types need one"))
        #expect(made.notes.contains { $0.hasPrefix("shape.outline: type GEOMETRY is not mapped") })
        _ = try Mapping(c)
    }
}
