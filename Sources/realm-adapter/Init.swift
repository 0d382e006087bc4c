import ArgumentParser
import Foundation
import RealmAdapter

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a starting configuration from an existing database.",
        discussion: """
            Reads the tables of a database schema and prints a configuration that syncs them: tables \
            become types, primary keys become Realm primary keys, single-column foreign keys become \
            links, join tables (a primary key made of two foreign keys) become join objects with \
            compoundPrimaryKeys, arrays become lists. What it cannot map is listed on standard error.

            The database type comes from --type, or from the URL's scheme (postgresql://), or is \
            the first this program knows (\(connectors.factories.first?.type ?? "none")). \
            The password comes from the URL or the database type's variable (PGPASSWORD for postgres, \
            SQLSERVER_PASSWORD for sqlserver); the written file then reads it from that variable \
            (passwordEnv) and never contains it.

              realm-adapter init --database postgresql://app@db.example.com/shop > adapter.json
              realm-adapter init --database sqlserver://sa@db.example.com:1433/shop > adapter.json
              realm-adapter validate --config adapter.json
              realm-adapter load --config adapter.json --dry-run
              realm-adapter load --config adapter.json
              realm-adapter run --config adapter.json
            """
    )

    @Option(
        help: ArgumentHelp(
            "The database: a URL (postgresql://, sqlserver:// or sqlite:///path) or libpq key=value pairs "
                + "(\"host=… dbname=…\"). A password in it is used, never written to the file.",
            valueName: "url"))
    var database: String

    @Option(
        help: ArgumentHelp(
            "The database type: \(connectors.factories.map(\.type).joined(separator: ", ")). "
                + "Default: from the URL's scheme.", valueName: "type"))
    var type: String?

    @Option(help: "The database schema (namespace) to read. Default: the database type's (public for postgres).")
    var schema: String?

    @Option(
        name: .shortAndLong, help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingErrors {
            let logger = global.bootstrap()
            // The password never reaches the written file or a message: the factory's variable
            // (PGPASSWORD, SQLSERVER_PASSWORD) names it there.
            let factory = try Self.factory(type: type, url: database)
            let variable = factory.passwordVariable
            let connection = try ConnectionString(database)
            let password =
                connection.password.map(Secret.init)
                ?? ProcessInfo.processInfo.environment[variable].map(Secret.init)
            let description = try await factory.describe(
                connection, password: password, schema: schema ?? factory.defaultSchema,
                logger: logger)
            // A password given now will be needed later too: from the variable, never from the file.
            let passwordEnv =
                password != nil || ProcessInfo.processInfo.environment[variable] != nil ? variable : nil
            let starting = StartingConfiguration(
                description, factory: factory, url: connection.withoutPassword,
                passwordEnv: passwordEnv)
            let (json, notes) = (starting.json, starting.notes)
            for n in notes { FileHandle.standardError.write(Data("note: \(n)\n".utf8)) }
            let text = json.serialized(pretty: true) + "\n"
            if let output {
                try text.write(toFile: output, atomically: true, encoding: .utf8)
                FileHandle.standardError.write(
                    Data(
                        ("Wrote \(output). Check it with `realm-adapter validate --config \(output)`, seed "
                            + "the Realms with `realm-adapter load --config \(output)`, then start "
                            + "`realm-adapter run --config \(output)`.\n").utf8))
            } else {
                print(text, terminator: "")
            }
        }
    }

    /// The connector `--type` names, or the URL's scheme, or the first registered.
    static func factory(type: String?, url: String) throws -> any ConnectorFactory {
        if let type {
            guard let f = connectors.factory(forType: type) else {
                throw ValidationError("--type: unknown database type '\(type)' (expected \(connectors.typeList)).")
            }
            return f
        }
        guard let f = connectors.factory(forURL: url) ?? connectors.factories.first else {
            throw ValidationError("This program knows no database types.")
        }
        return f
    }
}
