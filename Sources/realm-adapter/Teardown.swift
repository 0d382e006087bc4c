import ArgumentParser
import RealmAdapter

struct Teardown: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove what the adapter created in the database for its own use.",
        discussion: """
            For users who stop syncing a database. Postgres: removes the adapter's replication \
            slot (which otherwise keeps the server's WAL forever), its publication, its replication \
            origins (which outlive a dropped slot), and its rows of realm_adapter_state and the \
            dead-letter tables (each table too, once no other adapter has rows in it). SQL Server: \
            its resume point, its rows of the state and dead-letter tables (each table too, once no \
            other has rows in it), and, once no other daemon follows the database, the capture \
            triggers, their change log and gate; change tracking stays as it is. Your tables and \
            their data are never touched, nor are the Realms.

            Stop the daemon first (the command refuses while one streams). Look before you leap:
              realm-adapter teardown --config adapter.json --dry-run
              realm-adapter teardown --config adapter.json
            """
    )

    @Flag(help: "List what would be removed, and remove nothing.") var dryRun = false
    @OptionGroup var options: ConfigOptions

    func run() async throws {
        try await reportingErrors {
            let (c, logger) = try options.load()
            let (database, _, connector) = try Wiring.connector(c, logger: logger)
            let removed = try await connector.teardown(adapter: c.realm.adapterName, dryRun: dryRun)
            let target = database.displayTarget
            if removed.isEmpty {
                print("Nothing of adapter \(c.realm.adapterName) is left in \(target).")
                return
            }
            print((dryRun ? "Would remove from \(target):" : "Removed from \(target):"))
            for r in removed { print("  \(r)") }
            if dryRun { print("Nothing was removed (--dry-run).") }
        }
    }
}
