import Logging

/// The database types a program knows, by `database.type`: what ``Configuration`` decodes a
/// `database` section with, and what builds the connector for it.
///
/// ```swift
/// let connectors = ConnectorRegistry([PostgresConnectorFactory()])
/// let config = try Configuration.load(file: "adapter.json", connectors: connectors)
/// let connector = try connectors.connector(config, logger: logger)
/// ```
public struct ConnectorRegistry: Sendable {
    /// In registration order; the first is the default of `init` when nothing names a type.
    public let factories: [any ConnectorFactory]

    public init(_ factories: [any ConnectorFactory] = []) {
        self.factories = factories
    }

    /// The factory for `database.type`, or nil.
    public func factory(forType type: String) -> (any ConnectorFactory)? {
        factories.first { $0.type == type }
    }

    /// The factory whose URL scheme a connection URL has, or nil (key=value strings have none).
    public func factory(forURL url: String) -> (any ConnectorFactory)? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let scheme = url[..<colon].lowercased()
        return factories.first { $0.urlSchemes.contains(scheme) }
    }

    /// The known types, quoted, for messages: `"postgres" or "sqlserver"`.
    public var typeList: String {
        let names = factories.map { "\"\($0.type)\"" }
        return names.count <= 1 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// The connector for a configuration's database section.
    public func connector(_ c: Configuration, logger: Logger) throws -> any DatabaseConnector {
        guard let database = c.database else { throw RealmAdapterError.noDatabaseSection() }
        guard let factory = factory(forType: database.type) else {
            throw RealmAdapterError.unknownDatabaseType(database.type, known: typeList)
        }
        return try factory.connector(database, customTypes: c.mapping.customTypes, logger: logger)
    }
}

extension RealmAdapterError {
    static func noDatabaseSection() -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "The configuration has no database section, so there is nothing "
                + "to sync with. Add one (see `realm-adapter validate --help`).")
    }

    static func unknownDatabaseType(_ type: String, known: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "This program knows no database type '\(type)'"
                + (known.isEmpty ? "." : " (it knows \(known))."))
    }
}
