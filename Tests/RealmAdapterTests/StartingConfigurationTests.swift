import Foundation
import PostgresConnector
import Testing

@testable import RealmAdapter

/// `realm-adapter init`'s rules, over a described database: no server needed.
@Suite struct StartingConfigurationTests {
    typealias D = DatabaseDescription

    static func column(
        _ name: String, _ type: D.ColumnType?, db: String = "int4", nullable: Bool = false,
        text: Bool = false, generated: Bool = false
    ) -> D.Column {
        D.Column(name: name, databaseType: db, type: type, isNullable: nullable, isText: text, isGenerated: generated)
    }

    /// A shop: customers, orders linking to them, products, a join table order_item, a table
    /// without a key, a column of an unmapped type, a table keyed by a float, a legacy RealmId
    /// table, a partitioned table, and a link to a table that is left out.
    static let shop = D(
        name: "shop", schema: "public",
        tables: [
            D.Table(
                name: "customer",
                columns: [
                    column("id", .scalar(.int), generated: true), column("name", .scalar(.string), db: "text"),
                    column("tags", .array(.string), db: "_text", nullable: true),
                    column("mood", nil, db: "mood", nullable: true),
                ], primaryKey: ["id"]),
            D.Table(
                name: "orders",
                columns: [
                    column("id", .scalar(.uuid), db: "uuid"), column("customer_id", .scalar(.int), nullable: true),
                    column("reading_id", .scalar(.double), nullable: true),
                    column("note", .scalar(.string), nullable: true),
                ], primaryKey: ["id"],
                foreignKeys: [
                    .init(column: "customer_id", table: "customer", referencedColumn: "id"),
                    .init(column: "reading_id", table: "reading", referencedColumn: "id"),
                ]),
            D.Table(name: "product", columns: [column("sku", .scalar(.string), db: "text")], primaryKey: ["sku"]),
            D.Table(
                name: "order_item",
                columns: [
                    column("order_id", .scalar(.uuid), db: "uuid"), column("sku", .scalar(.string), db: "text"),
                    column("quantity", .scalar(.int)),
                ], primaryKey: ["order_id", "sku"],
                foreignKeys: [
                    .init(column: "order_id", table: "orders", referencedColumn: "id"),
                    .init(column: "sku", table: "product", referencedColumn: "sku"),
                ]),
            D.Table(name: "log", columns: [column("line", .scalar(.string), db: "text")], primaryKey: []),
            D.Table(name: "reading", columns: [column("id", .scalar(.double), db: "float8")], primaryKey: ["id"]),
            D.Table(
                name: "person",
                columns: [
                    column("id", .scalar(.int)),
                    column("RealmId", .scalar(.string), db: "varchar", nullable: true, text: true),
                ], primaryKey: ["id"]),
            D.Table(
                name: "event", columns: [column("id", .scalar(.int)), column("day", .scalar(.date), db: "date")],
                primaryKey: ["id", "day"], partitionColumns: ["day"]),
        ])

    static let made = StartingConfiguration(
        shop, factory: PostgresConnectorFactory(),
        url: "postgresql://app@db/shop", passwordEnv: "PGPASSWORD")

    func type(_ name: String) -> JSONValue? {
        guard case .array(let types)? = Self.made.json["schema"] else { return nil }
        return types.first { $0["name"] == .string(name) }
    }

    @Test func tablesBecomeTypesWithLinksListsAndOptionals() throws {
        #expect(
            type("customer")?["properties"]
                == .object([
                    .init("id", "int"), .init("name", "string"),
                    .init("tags", "string[]"),
                ]))
        #expect(type("orders")?["primaryKey"] == "id")
        #expect(type("orders")?["properties"]?["customer_id"] == "customer?", "a foreign key to a kept table is a link")
        #expect(type("orders")?["properties"]?["note"] == "string?")
    }

    @Test func aJoinTableBecomesAJoinTypeWithCompoundKeys() throws {
        #expect(type("order_item")?["primaryKey"] == "id")
        #expect(type("order_item")?["properties"]?["id"] == "string")
        let parts = Self.made.json["mapping"]?["compoundPrimaryKeys"]?["order_item"]
        #expect(
            parts
                == .array([
                    .object([.init("property", "order_id"), .init("dbColumn", "order_id"), .init("type", "uuid")]),
                    .object([.init("property", "sku"), .init("dbColumn", "sku"), .init("type", "string")]),
                ]))
    }

    @Test func aRealmIdColumnKeysTheTypeAndTheKeyBecomesTheDatabaseKey() throws {
        #expect(type("person")?["primaryKey"] == "RealmId" && type("person")?["databasePrimaryKey"] == "id")
        #expect(type("person")?["properties"] == .object([.init("id", "int?"), .init("RealmId", "string")]))
        #expect(
            Self.made.notes.contains { $0.hasPrefix("person: keyed by RealmId") && $0.contains("id is not generated") })
    }

    @Test func aPartitionedTableIsKeyedByTheRestOfItsKey() throws {
        #expect(type("event")?["primaryKey"] == "id")
    }

    @Test func whatCannotBeMappedIsLeftOutWithANote() throws {
        #expect(type("log") == nil && type("reading") == nil)
        #expect(type("customer")?["properties"]?["mood"] == nil)
        let notes = Self.made.notes
        #expect(
            notes.contains(
                "customer.mood: type mood is not mapped; left out (add it to mapping.customTypes and schema to sync it)"
            ))
        #expect(notes.contains("log: left out, because it has no primary key; synced types need one"))
        #expect(
            notes.contains(
                "reading: left out, because its primary key id is float8; keys must be integer, text or uuid"))
        // The link to the left-out table goes, and the note names the type plainly.
        #expect(type("orders")?["properties"]?["reading_id"] == nil)
        #expect(notes.contains("orders.reading_id: a link to reading, which was left out; dropped"), "\(notes)")
    }

    @Test func theDatabaseSectionHasTheConnectorsMembersAndNoPassword() throws {
        let database = Self.made.json["database"]
        #expect(
            database
                == .object([
                    .init("type", "postgres"), .init("url", "postgresql://app@db/shop"),
                    .init("slotName", "realm_adapter_shop"), .init("publication", "realm_adapter_shop"),
                    .init("passwordEnv", "PGPASSWORD"),
                ]))
        #expect(Self.made.json["realm"]?["path"] == "/shop")
    }

    @Test func theStartingConfigurationIsValid() throws {
        let c = try Configuration(json: Self.made.json, environment: ["PGPASSWORD": "x"], connectors: .postgres)
        _ = try Mapping(c)
        #expect(c.schema.types.map(\.name) == ["customer", "orders", "product", "order_item", "person", "event"])
    }
}
