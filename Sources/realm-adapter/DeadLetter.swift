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
            let status = try await connector.statusReport(adapter: c.realm.adapterName)
            guard !status.streaming else { throw RealmAdapterError.daemonRunning(stream: status.streamName) }
            let store = try StoreLocation(c.realm).open(logger: logger)
            guard try store.contains(path) else { throw RealmAdapterError.realmNotFound(path) }
            let adapter = try Adapter(
                store: store, name: c.realm.adapterName, pathRegex: c.realm.effectivePathRegex, logger: logger)
            // The database may hold it already (a crash after its commit): then it is not blocking.
            let applied = try await connector.appliedVersions(adapter: adapter.name)[path] ?? 0
            if try adapter.cursor(path) < applied { try adapter.advance(path, through: applied) }
            guard let tx = try adapter.pending(path, limit: 1).first else {
                throw RealmAdapterError.nothingBlocked(path)
            }
            if let version, version != tx.version {
                throw RealmAdapterError.notTheBlockedVersion(path, oldest: tx.version, given: version)
            }
            let blocked = try BlockedTransaction.current(in: store, adapter: adapter, path: path)
            let reason = blocked?.error ?? "moved aside by realm-adapter dead-letter"
            try await connector.deadLetter(
                tx.instructions, error: reason, adapter: adapter.name, path: path, version: tx.version)
            try UnsentObjects.record(tx.instructions, store, adapter: adapter.name, path: path)
            try adapter.advance(path, through: tx.version)
            try BlockedTransaction.clear(in: store, adapter: adapter.name, path: path)
            print(
                "Moved version \(tx.version) of \(path) (\(tx.instructions.count) instructions) to "
                    + "realm_adapter_dead_letter; "
                    + "`realm-adapter run` goes on from the next one.")
        }
    }
}

extension RealmAdapterError {
    static func daemonRunning(stream: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "A daemon is streaming from \(stream): stop it first, then move the transaction "
                + "aside.")
    }

    static func nothingBlocked(_ path: String) -> RealmAdapterError {
        RealmAdapterError(.invalidState, "\(path) has no transaction waiting to be sent: nothing is blocked.")
    }

    static func notTheBlockedVersion(_ path: String, oldest: Int64, given: Int64) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "The oldest unsent transaction of \(path) is version \(oldest), not \(given); "
                + "run `realm-adapter status` again.")
    }
}
