import Logging
import RealmAdapter

/// `database.type` `postgres`: logical replication in, origin-tagged transactions out.
public struct PostgresConnectorFactory: ConnectorFactory {
    public init() {}

    public var type: String { "postgres" }
    public var defaultSchema: String { "public" }
    public var defaultPort: Int { 5432 }
    public var urlSchemes: [String] { ["postgresql", "postgres"] }

    public func settings(_ reader: inout JSONObjectReader) throws -> any ConnectorSettings {
        try PostgresOptions(&reader)
    }

    public func connector(
        _ database: DatabaseConfiguration, customTypes: [String: ScalarType],
        logger: Logger
    ) throws -> any DatabaseConnector {
        PostgresConnector(configuration: database, customTypes: customTypes, logger: logger)
    }

    public func describe(
        _ connection: ConnectionString, password: Secret?, schema: String,
        logger: Logger
    ) async throws -> DatabaseDescription {
        var settings = PostgresSettings(url: connection.withoutPassword, password: password)
        settings.applicationName = "realm-adapter init"
        let pg = try await PostgresConnection.connect(settings, logger: logger)
        defer { pg.close() }
        let name = connection.database ?? "database"
        return try await pg.session { s in try PostgresIntrospection.describe(s, schema: schema, databaseName: name) }
    }

    /// Slots and publications are per server and per database: names of this database's own.
    public func startingSettings(for database: DatabaseDescription) -> [JSONValue.Member] {
        let own = Self.ownName(for: database.name)
        return [.init("slotName", .string(own)), .init("publication", .string(own))]
    }

    /// `realm_adapter_<database>` as a valid slot name: lower-case letters, digits and
    /// underscores, at most 63 bytes.
    static func ownName(for database: String) -> String {
        let safe = String(
            decoding: database.lowercased().utf8.map { c in
                (97...122).contains(c) || (48...57).contains(c) ? c : UInt8(ascii: "_")
            }, as: UTF8.self)
        return String(("realm_adapter_" + safe).prefix(63))
    }
}

extension ConnectorRegistry {
    /// Postgres alone (what the tests and benchmarks of this module parse configurations with).
    public static let postgres = ConnectorRegistry([PostgresConnectorFactory()])
}
