import Foundation
import PostgresConnector
import Testing

@testable import RealmAdapter

/// `database.type` chooses the connector through one registry; each connector decodes its own
/// members of the section, and a member nobody reads is still an error naming its JSON path.
@Suite struct ConnectorRegistryTests {
    static let schema = #""schema": [{"name": "Bus", "primaryKey": "id", "properties": {"id": "int"}}]"#

    func decode(_ database: String, connectors: ConnectorRegistry = .postgres) throws -> Configuration {
        let text = #"{"realm": {"path": "/SQLDemo"}, \#(Self.schema), "database": \#(database)}"#
        return try Configuration(json: try JSONValue(parsing: text), environment: [:], connectors: connectors)
    }

    func error(_ database: String, connectors: ConnectorRegistry = .postgres) -> RealmAdapterError? {
        do {
            _ = try decode(database, connectors: connectors)
            return nil
        } catch {
            return error as? RealmAdapterError
        }
    }

    @Test func theConnectorDecodesItsOwnMembers() throws {
        let c = try decode(
            #"{"type": "postgres", "host": "db", "slotName": "s1", "sslmode": "require", "retry": {"attempts": 2}}"#)
        let database = try #require(c.database)
        #expect(database.type == "postgres" && database.schema == "public" && database.retry.attempts == 2)
        #expect(database.postgres.slotName == "s1" && database.postgres.sslmode == .require)
        #expect(database.postgres.publication == "realm_adapter", "defaults for what is not given")
        #expect(database.settings.summary == ["slot s1", "sslmode require"])
    }

    @Test func anUnknownMemberNamesItsPathAndTheKnownOnes() throws {
        let e = try #require(error(#"{"type": "postgres", "host": "db", "slotNam": "s1"}"#))
        #expect(e.code == .invalidConfiguration && e.context["json.path"] == "database.slotNam")
        // Both the common members and the connector's are offered.
        #expect(e.message.contains("unknown key") && e.message.contains("slotName") && e.message.contains("retry"))
    }

    @Test func aConnectorsCheckNamesItsMember() throws {
        let e = try #require(error(#"{"type": "postgres", "host": "db", "publication": "Has-Dash"}"#))
        #expect(e.context["json.path"] == "database.publication")
    }

    @Test func anUnknownTypeNamesTheKnownOnes() throws {
        let e = try #require(error(#"{"type": "oracle", "host": "db"}"#))
        #expect(e.context["json.path"] == "database.type" && e.message.contains(#"expected "postgres""#))
        let none = try #require(error(#"{"type": "postgres", "host": "db"}"#, connectors: ConnectorRegistry()))
        #expect(none.context["json.path"] == "database.type" && none.message.contains("knows none"))
    }

    @Test func aConfigurationWithoutADatabaseNeedsNoConnector() throws {
        let text = #"{"realm": {"path": "/SQLDemo"}, \#(Self.schema)}"#
        let c = try Configuration(json: try JSONValue(parsing: text), environment: [:])
        #expect(c.database == nil)
        #expect(throws: RealmAdapterError.self) {
            try ConnectorRegistry.postgres.connector(c, logger: .init(label: "t"))
        }
    }

    @Test func urlSchemesChooseTheConnector() {
        #expect(ConnectorRegistry.postgres.factory(forURL: "postgresql://u@db/app")?.type == "postgres")
        #expect(ConnectorRegistry.postgres.factory(forURL: "postgres://db")?.type == "postgres")
        #expect(ConnectorRegistry.postgres.factory(forURL: "sqlserver://db") == nil)
        #expect(ConnectorRegistry.postgres.factory(forURL: "host=db dbname=app") == nil, "key=value pairs name no type")
    }

    @Test func theDisplayTargetUsesTheConnectorsPort() throws {
        #expect(
            try decode(#"{"type": "postgres", "host": "db", "database": "app"}"#).database?.displayTarget
                == "db:5432/app")
    }
}
