import Foundation
import Logging
import RealmAdapter

/// `database.type` `sqlserver`: change tracking in, context-tagged transactions out, over
/// FreeTDS. Not verified against a server yet: see docs/sqlserver.md.
public struct SQLServerConnectorFactory: ConnectorFactory {
    public init() {}

    public var type: String { "sqlserver" }
    public var defaultSchema: String { "dbo" }
    public var defaultPort: Int { 1433 }
    public var urlSchemes: [String] { ["sqlserver", "mssql"] }
    /// Named like the live suite's `SQLSERVER_URL` (`PGPASSWORD` belongs to Postgres's tools, and
    /// `sqlcmd`'s `SQLCMDPASSWORD` to that one tool).
    public var passwordVariable: String { "SQLSERVER_PASSWORD" }

    public func settings(_ reader: inout JSONObjectReader) throws -> any ConnectorSettings {
        let url = try reader.string("url").flatMap { try? ConnectionString($0) }
        let port = try reader.int("port") ?? url?.port
        if let host = try reader.string("host") {
            try SQLServerOptions.checkHost(host, at: "host", &reader)
        } else if let host = url?.host {
            try SQLServerOptions.checkHost(host, at: "url", &reader)
        }
        let query = url.flatMap { URLComponents(string: $0.withoutPassword)?.queryItems } ?? []
        return try SQLServerOptions(&reader, port: port, url: query)
    }

    public func connector(
        _ database: DatabaseConfiguration, customTypes: [String: ScalarType],
        logger: Logger
    ) throws -> any DatabaseConnector {
        try SQLServerConnector(configuration: database, customTypes: customTypes, logger: logger)
    }

    public func describe(
        _ connection: ConnectionString, password: Secret?, schema: String,
        logger: Logger
    ) async throws -> DatabaseDescription {
        var settings = SQLServerSettings(
            host: connection.host ?? "localhost", port: connection.port, user: connection.user,
            password: password ?? connection.password.map(Secret.init), database: connection.database)
        settings.applicationName = "realm-adapter init"
        // A server with a self-signed certificate (development, Babelfish's): the URL's
        // `?trustServerCertificate=true` or `?encryption=off`, as the configuration's members say.
        let query = URLComponents(string: connection.withoutPassword)?.queryItems ?? []
        if let e = query.last(where: { $0.name == "encryption" })?.value {
            guard let mode = SQLServerOptions.Encryption(rawValue: e) else {
                throw SQLServerError.invalidSetting(
                    "url", "unknown encryption '\(e)' (expected off, request, require).")
            }
            settings.options.encryption = mode
        }
        if query.last(where: { $0.name == "trustServerCertificate" })?.value == "true" {
            settings.options.trustServerCertificate = true
        }
        let c = try await SQLServerConnection.connect(settings, logger: logger)
        defer { c.close() }
        let name = connection.database ?? "database"
        return try await c.session { s in
            var d = try SQLServerIntrospection.describe(s, schema: schema, databaseName: name)
            // Said in the configuration, so that the user sees it (and `run` need not guess).
            if try SQLServerConnector.capture(s, configured: nil) == .triggers {
                d.settings.append(.init("changeCapture", .string(SQLServerOptions.ChangeCapture.triggers.rawValue)))
            }
            return d
        }
    }

    /// The tracking name is the database's own: two configurations on one server do not share it.
    /// Then what ``describe(_:password:schema:logger:)`` found (`changeCapture`).
    public func startingSettings(for database: DatabaseDescription) -> [JSONValue.Member] {
        [.init("trackingName", .string("realm_adapter_" + database.name))] + database.settings
    }
}

extension ConnectorRegistry {
    /// SQL Server alone (what this module's tests parse configurations with).
    public static let sqlServer = ConnectorRegistry([SQLServerConnectorFactory()])
}
