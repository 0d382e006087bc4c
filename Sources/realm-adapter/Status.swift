import ArgumentParser
import Foundation
import Logging
import RealmAdapter

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show how far sync has come, per Realm, and how much WAL the replication slot holds.",
        discussion: """
            Per synced Realm: its version, how many of its transactions the adapter has still to \
            send to the database (the lag; the adapter's own writes, such as loaded rows, are never \
            sent), the version the database recorded, and the last database position the Realm \
            holds (the daemon records one for all its Realms: a Realm holds every change up to \
            it). Postgres: the slot's confirmed position, whether a daemon is streaming from it, and \
            how much WAL it keeps the server from recycling: an abandoned \
            slot fills the disk, so a warning is printed above database.walWarningBytes (exit code 2). \
            SQL Server: the capture (change tracking or triggers), how far behind the Realms are, \
            whether a daemon runs, and the setup problems with the statements that fix them (exit code 2). \
            Changes set aside (ignoreSQLErrors) are counted, and the newest 10 of each table listed \
            with the time and the database's error (exit code 2). A Realm transaction the \
            database rejected, which stopped the daemon, is shown with the database's error and what \
            to do (exit code 3; see `realm-adapter dead-letter`). Each webhook (events.webhooks) \
            shows how many transactions it has still to deliver, since when, and its dead letters \
            (exit code 2): the first 10, by path and version, or all with --all-dead-letters. A \
            load that started and did not finish is named (exit code 2): `run` \
            refuses to start until `load` has run to its end.
            """
    )

    @OptionGroup var options: ConfigOptions
    @Flag(help: "List every webhook dead letter (without it, the first 10 of each webhook).")
    var allDeadLetters = false

    func run() async throws {
        try await reportingErrors {
            let (c, logger) = try options.load()
            if c.database == nil, !c.events.webhooks.isEmpty {
                // Webhooks without a database (`realm-adapter events`): their part only.
                // Never created here: a mistyped realm.store would otherwise be a new, empty store.
                let exists = try StoreLocation(c.realm).exists(logger: logger)
                let store = exists ? try StoreLocation(c.realm).open(logger: logger) : nil
                print(
                    "Webhooks: store \(c.realm.store)" + (exists ? "" : ": none there yet (`load` or `run` makes it)")
                )
                let webhooks = try SyncReport.webhooks(c, store: store, logger: logger)
                printWebhooks(webhooks)
                if webhooks.contains(where: { !$0.lag.deadLetters.isEmpty }) { throw ExitCode(2) }
                return
            }
            let (database, _, connector) = try Wiring.connector(c, logger: logger)
            guard try StoreLocation(c.realm).exists(logger: logger) else {
                // The database is asked first: one that cannot be reached is the error then.
                _ = try await connector.statusReport(adapter: c.realm.adapterName)
                throw RealmAdapterError.noStore(c.realm.store, for: "status")
            }
            let store = try StoreLocation(c.realm).open(logger: logger)
            let report = try await SyncReport.make(
                c, store: store, connector: connector, listAllUpTo: Self.allRealmsUpTo, logger: logger)
            print(
                "Adapter \(report.adapter): store \(c.realm.store) (\(report.engine)), "
                    + "database \(database.displayTarget)"
            )
            print("")
            let header = ["Realm", "version", "unsent", "db recorded", "last position applied"]
            let rows = report.realms.map {
                [
                    $0.path, String($0.version), String($0.unsent), $0.recorded.map(String.init) ?? "-",
                    $0.position ?? "-",
                ]
            }
            if report.realmCount == 0 {
                print("(no synced Realms yet)")
            } else if !rows.isEmpty {
                print(Self.table([header] + rows))
            }
            if report.realms.count < report.realmCount {
                print(
                    "\(report.realmCount) Realms; \(report.behind) with unsent "
                        + "changes\(rows.isEmpty ? "" : " (above)"), the others caught up."
                )
            }
            print("")
            let db = report.database
            for line in db.stream { print(line) }
            for w in db.warnings { print("warning: \(w)") }
            if let load = report.unfinishedLoad { print("warning: \(load)") }
            if db.deadLetters > 0 {
                print(
                    "warning: \(db.deadLetters) change(s) in the dead-letter table realm_adapter_dead_letter "
                        + "(ignoreSQLErrors)"
                )
                for d in db.latestDeadLetters {
                    print("  dead letter: \(d.path) version \(d.version), \(d.failedAt): \(d.error)")
                }
                printMore(db.deadLetters - db.latestDeadLetters.count, in: "realm_adapter_dead_letter")
            }
            if db.deadRows > 0 {
                print(
                    "warning: \(db.deadRows) database row change(s) no Realm could hold, set aside in "
                        + "realm_adapter_dead_row (ignoreSQLErrors)"
                )
                for d in db.latestDeadRows {
                    print("  dead row: table \(d.table) at \(d.position), \(d.failedAt): \(d.error)")
                }
                printMore(db.deadRows - db.latestDeadRows.count, in: "realm_adapter_dead_row")
            }
            printWebhooks(report.webhooks)
            for b in report.blocked {
                print("blocked: \(b.path) version \(b.version) was rejected by the database: \(b.error)")
                print(
                    "  Fix the database and start `realm-adapter run` again (it retries), or move it aside with "
                        + "`realm-adapter dead-letter \(b.path) --version \(b.version) --config \(options.config)`.")
            }
            if let b = report.blockedRow {
                print("blocked: a database change no Realm can hold stopped the daemon at \(b.position): \(b.error)")
            }
            if report.isBlocked { throw ExitCode(3) }
            if report.needsAttention { throw ExitCode(2) }
        }
    }

    /// The line under a list of the newest dead letters or rows when the table holds more.
    private func printMore(_ more: Int, in table: String) {
        if more > 0 { print("  … and \(more) older (the table \(table) keeps each whole)") }
    }

    /// Each webhook's line, and its dead letters (the first 10 without --all-dead-letters).
    func printWebhooks(_ webhooks: [SyncReport.WebhookLine]) {
        for w in webhooks {
            let lag = w.lag
            let age = lag.oldest.map { " (the oldest committed \($0))" } ?? ""
            print(
                "webhook \(w.name): \(lag.pending) transaction(s) to deliver in \(lag.realms) Realm(s)\(age), "
                    + "\(lag.deadLetters.count) dead letter(s)")
            let shown = allDeadLetters ? lag.deadLetters[...] : lag.deadLetters.prefix(10)
            for d in shown {
                print("  dead letter: \(d.path) version \(d.version) after \(d.attempts) attempts: \(d.error)")
            }
            if shown.count < lag.deadLetters.count {
                print("  … and \(lag.deadLetters.count - shown.count) more (--all-dead-letters lists them)")
            }
        }
    }

    /// Up to this many followed Realms, `status` lists them all; past it, those with unsent changes.
    static let allRealmsUpTo = 20

    static func table(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { r in
            r.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        .joined(separator: "\n")
    }
}
