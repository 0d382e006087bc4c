import ArgumentParser
import Foundation
import RealmAdapter

struct DeadLetter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letter",
        abstract: "Move the Realm transaction that blocks sync to the database's dead-letter table.",
        discussion: """
            When the database rejects a Realm transaction (a constraint of a table that is not \
            synced, say) and ignoreSQLErrors is off, the daemon stops with the transaction unsent, \
            and `realm-adapter status` shows it as blocked (exit code 3). Either fix the database \
            and start the daemon again (the transaction is retried), or move the transaction aside \
            with this command: it goes, with its instructions and the database's error, to the \
            table realm_adapter_dead_letter, marked as applied in the same database transaction, \
            so sync goes on from the next one. Nothing is lost: the Realm keeps the change, and the \
            dead-letter row holds it for you to apply by hand.

            Stop the daemon first (the command refuses while one streams). Example:
              realm-adapter status --config adapter.json
              realm-adapter dead-letter /SQLDemo --version 42 --config adapter.json
            """
    )

    @Argument(help: "The Realm whose blocked transaction to move aside.") var path: String
    @Option(
        help: ArgumentHelp("The version status shows as blocked; refused if it is not the one.", valueName: "version"))
    var version: Int64?
    @OptionGroup var options: ConfigOptions

    func run() async throws {
        try await reportingErrors {
            let (c, logger) = try options.load()
            let (_, _, connector) = try Wiring.connector(c, logger: logger)
            // Refused before the store is opened while a daemon streams (moving it checks again).
            let status = try await connector.statusReport(adapter: c.realm.adapterName)
            guard !status.streaming else { throw RealmAdapterError.daemonRunning(stream: status.streamName) }
            let store = try StoreLocation(c.realm).open(logger: logger)
            let adapter = try Adapter(
                store: store, name: c.realm.adapterName, pathRegex: c.realm.effectivePathRegex, logger: logger)
            let tx = try await adapter.moveBlockedToDeadLetters(path, version: version, connector: connector)
            print(
                "Moved version \(tx.version) of \(path) (\(tx.instructions.count) instructions) to "
                    + "realm_adapter_dead_letter; "
                    + "`realm-adapter run` goes on from the next one.")
        }
    }
}
