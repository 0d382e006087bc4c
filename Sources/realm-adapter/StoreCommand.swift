import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer

struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Move a Realm store from one backend to another.",
        subcommands: [Copy.self]
    )
}

extension StoreCommand {
    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a whole store into an empty one: a directory to a Postgres database, or back.",
            discussion: """
                Copies every Realm with its objects, history and versions, the adapters' cursors, the \
                source positions, the recorded changes, what the store keeps of blocked transactions and \
                webhooks' dead letters, and the server's users, tokens and permissions. (The dead letters of \
                ignoreSQLErrors are in the synced database, and stay there.) The target must be empty (a \
                new directory, or a database with no store in it), which is checked first; the Realms are \
                copied in one transaction there and the server's tables in another, and the rows of every \
                table are counted on both sides at the end.

                Stop every `realm-adapter run`, `events` and `serve` on the source first: the copy is of \
                one moment of the store (it refuses to start while a daemon or a load holds an adapter's \
                lock). Then point realm.store at the target and start them again.

                A URL's password comes from the URL, or from PGPASSWORD or ~/.pgpass; it is never printed.

                  realm-adapter store copy --from ./realms --to postgresql://app@db.internal/realms
                  realm-adapter store copy --from postgresql://app@db.internal/realms --to ./realms-backup
                """)

        @Option(help: ArgumentHelp("The store to copy: a directory or a postgresql:// URL.", valueName: "dir|url"))
        var from: String

        @Option(help: ArgumentHelp("The empty store to copy into: a directory or a URL.", valueName: "dir|url"))
        var to: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                let logger = global.bootstrap()
                let source = try StoreLocation(commandLine: from)
                let target = try StoreLocation(commandLine: to)
                guard source.text != target.text else { throw ValidationError("--from and --to name the same store.") }
                guard try source.exists(logger: logger) else { throw RealmAdapterError.noStore(source.text) }
                let from = try source.open(logger: logger)
                let locks = try from.lockedForCopy()
                let into = try target.open(logger: logger)
                let (sourceServer, targetServer) = (try source.userDirectory(), try target.userDirectory())
                // Both parts of the target are empty before either is written.
                try targetServer.requireEmpty(named: target.text)
                let reporter = CopyProgress()
                let started = ContinuousClock.now
                let rows = try from.copy(to: into) { reporter.report($0, $1) }
                let serverRows = try sourceServer.copy(
                    to: targetServer, named: target.text, progress: { reporter.report($0, $1) })
                reporter.finish()
                withExtendedLifetime(locks) {}
                let all = rows + serverRows
                let realms = all.first { $0.table == "realm" }?.rows ?? 0
                let history = all.first { $0.table == "history" }?.rows ?? 0
                let total = all.reduce(0) { $0 + $1.rows }
                let seconds = (ContinuousClock.now - started).seconds
                print(
                    "Copied \(source.text) to \(target.text): \(realms) Realms, \(history) history records, "
                        + "\(total) rows in \(all.count) tables, in \(String(format: "%.1f", seconds)) s. "
                        + "Every table's rows were counted on both sides and agree.")
                print("Point realm.store at \(target.text) before starting `run` and `serve` again.")
            }
        }
    }
}

/// Tells, on standard error, each table once copied, and how far a long one is every 2 s.
private final class CopyProgress {
    private var table = ""
    private var rows = 0
    private var lastLine = ContinuousClock.now

    func report(_ table: String, _ rows: Int) {
        if table != self.table { finish() }
        (self.table, self.rows) = (table, rows)
        let now = ContinuousClock.now
        if now - lastLine >= .seconds(2) {
            lastLine = now
            FileHandle.standardError.write(Data("  \(table): \(rows) rows so far\n".utf8))
        }
    }

    /// Tells the last table's count.
    func finish() {
        if !table.isEmpty { FileHandle.standardError.write(Data("  \(table): \(rows) rows\n".utf8)) }
        table = ""
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
