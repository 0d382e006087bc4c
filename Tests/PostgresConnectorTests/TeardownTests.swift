import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration.BadRowTests {
    /// `teardown` removes what the daemon created for itself (slot, publication, origins, its
    /// state and dead-letter tables) and nothing of the user's; refused while a daemon streams;
    /// `--dry-run` lists the same and removes nothing. Replication origins outlived their slot
    /// before: nothing removed them.
    @Test(.timeLimit(.minutes(1)))
    func teardownRemovesWhatTheAdapterCreatedAndNothingElse() async throws {
        try await Self.withSyncingDaemon(GuaranteeWorkload.schema) { dir, config, pg, daemon in
            _ = try await pg.sql(#"INSERT INTO "Item" VALUES (1, 0, 'db')"#)
            let cli = ChildProcess.built("realm-adapter")
            let busy = try await ChildProcess.run(cli, ["teardown", "--config", config])
            #expect(busy.status == 1 && busy.stderr.contains("stop `realm-adapter run`"), "\(busy.stderr)")
            #expect(await daemon.terminate() == 0)

            func leftovers() async throws -> [String] {
                try await pg.sql(
                    """
                    SELECT 'slot ' || slot_name FROM pg_replication_slots WHERE database = current_database()
                    UNION ALL SELECT 'publication ' || pubname FROM pg_publication
                    UNION ALL SELECT 'origin ' || roname FROM pg_replication_origin WHERE roname LIKE 'realm_adapter_%'
                      AND roname LIKE '%' || current_database() || '%'
                    UNION ALL SELECT 'table ' || tablename FROM pg_tables WHERE tablename LIKE 'realm_adapter_%'
                    """
                ).compactMap { $0[0] }.sorted()
            }
            let before = try await leftovers()
            #expect(
                before.contains { $0.hasPrefix("slot ") } && before.contains { $0.hasPrefix("origin ") }, "\(before)")
            let dry = try await ChildProcess.run(cli, ["teardown", "--config", config, "--dry-run"])
            #expect(dry.status == 0 && dry.stdout.contains("Would remove") && dry.stdout.contains("replication slot"))
            #expect(try await leftovers() == before)

            let done = try await ChildProcess.run(cli, ["teardown", "--config", config])
            #expect(done.status == 0 && done.stdout.contains("Removed from"), "\(done.stdout)\(done.stderr)")
            #expect(try await leftovers() == [], "left behind")
            #expect(try await pg.sql(#"SELECT count(*) FROM "Item""#) == [["1"]], "the user's data stays")
            let again = try await ChildProcess.run(cli, ["teardown", "--config", config])
            #expect(again.status == 0 && again.stdout.contains("Nothing of adapter"), "\(again.stdout)")
            _ = dir
        }
    }
}
