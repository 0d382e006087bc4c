import Foundation
import Logging
import RealmAdapter

/// `database.type` `sqlite`: an app's SQLite database file, synced both ways.
///
/// ```json
/// "database": { "type": "sqlite", "file": "/var/lib/app/app.sqlite", "createSchema": true }
/// ```
public struct SQLiteConnectorFactory: ConnectorFactory {
    public init() {}

    public var type: String { "sqlite" }
    public var defaultSchema: String { "main" }
    public var defaultPort: Int { 0 }
    public var urlSchemes: [String] { ["sqlite"] }
    public var needsServer: Bool { false }

    public func settings(_ reader: inout JSONObjectReader) throws -> any ConnectorSettings {
        try SQLiteOptions(&reader)
    }

    public func connector(
        _ database: DatabaseConfiguration, customTypes: [String: ScalarType],
        logger: Logger
    ) throws -> any DatabaseConnector {
        try SQLiteConnector(configuration: database, logger: logger)
    }

    public func describe(
        _ connection: ConnectionString, password: Secret?, schema: String,
        logger: Logger
    ) async throws -> DatabaseDescription {
        try SQLiteIntrospection.describe(file: try SQLiteIntrospection.file(of: connection))
    }

    /// The file (there is no server to name).
    public func startingSettings(for database: DatabaseDescription) -> [JSONValue.Member] {
        [.init("file", .string(database.file ?? ""))]
    }
}

/// The SQLite connector's members of the `database` section.
public struct SQLiteOptions: ConnectorSettings, Hashable {
    /// The database file (`file`): absolute, or relative to the working directory.
    public var file: String
    /// How often the change log is read (`pollIntervalMs`, default 20).
    public var pollIntervalMs: Int = 20

    public init(file: String) { self.file = file }

    init(_ r: inout JSONObjectReader) throws {
        file = try r.string("file") ?? ""
        guard !file.isEmpty else { throw r.error("file", "is required: the SQLite database file to sync.") }
        pollIntervalMs = try r.int("pollIntervalMs", in: 1...60_000) ?? pollIntervalMs
    }

    public var summary: [String] { ["polled every \(pollIntervalMs) ms"] }
    public var location: String? { file }
}

extension DatabaseConfiguration {
    /// The SQLite members of the section.
    public var sqlite: SQLiteOptions {
        get { settings as? SQLiteOptions ?? SQLiteOptions(file: "") }
        set { settings = newValue }
    }
}

extension ConnectorRegistry {
    /// SQLite alone.
    public static let sqlite = ConnectorRegistry([SQLiteConnectorFactory()])
}
