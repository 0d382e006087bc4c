import ArgumentParser
import Foundation
import RealmAdapter
import RealmServer

extension UserCommand {
    /// `user admin-token`: named admin tokens for backends (the legacy `keys/admin.json`, but
    /// several, each revocable on its own: rotating one needs no downtime).
    struct AdminToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "admin-token",
            abstract: "Make, list and revoke named admin tokens: a backend's key to every Realm.",
            discussion: """
                An admin token does not expire; it works (as an Authorization header, anywhere an \
                admin's refresh token does) until it is revoked, on every server of the store. It \
                is printed once, by create. To rotate one: create a new name, move the backend to \
                it, revoke the old.

                Examples:
                  realm-adapter user admin-token create billing-backend --config adapter.json
                  realm-adapter user admin-token list --config adapter.json
                  realm-adapter user admin-token revoke billing-backend --config adapter.json
                """,
            subcommands: [Create.self, List.self, Revoke.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make an admin token and print it (it needs the signing key in the environment).")
            @Argument(help: "A name for it (who uses it: billing-backend).") var name: String
            @OptionGroup var options: ConfigOptions

            func run() async throws {
                try await reportingErrors {
                    let c = try options.load(needsSchema: false).0
                    let key = try c.server.signingKey()
                    let users = try StoreLocation(c.realm).userDirectory()
                    let id = try users.addAdminToken(name: name)
                    print(try await Tokens(key: key, configuration: c.server).adminToken(name: name, id: id))
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the admin tokens (names, never tokens).")
            @OptionGroup var options: ConfigOptions

            func run() async throws {
                try await reportingErrors {
                    let users = try options.userDirectory()
                    let tokens = try users.adminTokens()
                    if tokens.isEmpty {
                        print("No admin tokens: `realm-adapter user admin-token create NAME` makes one.")
                    }
                    for t in tokens { print("\(t.name)\tcreated \(t.created)") }
                }
            }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "End an admin token, at once, everywhere.")
            @Argument(help: "Its name.") var name: String
            @OptionGroup var options: ConfigOptions

            func run() async throws {
                try await reportingErrors {
                    let users = try options.userDirectory()
                    guard try users.removeAdminToken(name: name) else {
                        throw RealmAdapterError(.invalidValue, "There is no admin token named \(name).")
                    }
                    print("Revoked the admin token \(name)")
                }
            }
        }
    }
}
