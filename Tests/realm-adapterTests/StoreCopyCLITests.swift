import Foundation
import TestSupport
import Testing

/// `realm-adapter store copy` as an operator runs it (issue 43): a server's store moved from
/// its directory to a Postgres database, and a server started on the copy.
@Suite struct StoreCopyCLITests {
    /// After the move, the server on Postgres answers the refresh token the server on the
    /// directory gave, serves the same Realm, and knows the same users; a copy into a store that
    /// is not empty is refused and changes nothing.
    @Test(.timeLimit(.minutes(2)))
    func aServerMovedToPostgresKeepsItsUsersTokensAndRealms() async throws {
        guard let (url, drop) = try await ServeReplicaTests.freshStore() else {
            if ServeReplicaTests.environment["CI"] == "true" {
                Issue.record("no Postgres test server: run scripts/test.sh")
            }
            return
        }
        let before = try await ServeTests.Server()
        try await before.start()
        let granted = try await before.cli([
            "permission", "grant", "read", "/shop", "--user", "bob", "--config", before.config,
        ])
        #expect(granted.status == 0, "\(granted.stderr)")
        let refresh = try await before.login("bob")
        guard case .success(let bobAccess) = try await before.access(refresh, "/shop") else {
            Issue.record("bob was refused /shop before the move")
            return
        }
        let query = "{ stops { id name } }"
        let served = try await before.graphQL("/shop", bobAccess, query)
        before.process?.signal(SIGTERM)
        before.process?.reap()

        let copied = try await before.cli(["store", "copy", "--from", before.store, "--to", url])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stdout.contains("1 Realms") && copied.stdout.contains("agree"), "\(copied.stdout)")
        #expect(
            copied.stderr.contains("user: 3 rows") && copied.stderr.contains("permission: 1 rows"), "\(copied.stderr)")

        let after = try await ServeTests.Server(store: url, seeded: false)
        try await after.start()
        guard case .success(let access) = try await after.access(refresh, "/shop") else {
            Issue.record("the server on the copy refused the refresh token the first server gave")
            return
        }
        #expect(try await after.graphQL("/shop", access, query) == served)
        let users = try await after.cli(["user", "list", "--config", after.config])
        let listed = try await before.cli(["user", "list", "--config", before.config])
        #expect(users.status == 0 && users.stdout == listed.stdout, "\(users.stdout) \(users.stderr)")

        let again = try await before.cli(["store", "copy", "--from", url, "--to", before.store])
        #expect(again.status != 0 && again.stderr.contains("is not empty"), "\(again.stderr)")
        // A target whose server tables hold a user, and no Realm: refused before anything is written.
        let other = try await ServeTests.Server(seeded: false)
        let added = try await other.cli(["user", "add", "zed", "--config", other.config], stdin: "zed-password\n")
        #expect(added.status == 0, "\(added.stderr)")
        let refused = try await other.cli(["store", "copy", "--from", url, "--to", other.store])
        #expect(refused.status != 0 && refused.stderr.contains("its table user has rows"), "\(refused.stderr)")
        let realms = try await other.cli(["realm", "list", "--store", other.store])
        #expect(!realms.stdout.contains("/shop"), "\(realms.stdout)")
        let dump = try await before.cli(["realm", "dump", "/shop", "--store", before.store])
        let dumped = try await before.cli(["realm", "dump", "/shop", "--store", url])
        #expect(dump.status == 0 && dump.stdout == dumped.stdout)
        after.process?.signal(SIGTERM)
        after.process?.reap()
        await drop()
    }
}
