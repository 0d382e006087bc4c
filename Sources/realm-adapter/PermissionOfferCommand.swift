import ArgumentParser
import Foundation
import RealmAdapter
import RealmServer

extension PermissionCommand {
    /// `permission offer`: an operator's permission offers (users make theirs over HTTP).
    struct Offer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "offer",
            abstract: "Offer a level on a path to whoever gets a token; list and withdraw offers.",
            discussion: """
                The token is printed once: the directory keeps only its SHA-256 (an offer's id). \
                Whoever accepts it (POST /permissions/offers/<token>/accept, or `offer accept`) gets \
                the level, unless they have more there already. Users who manage a path make their \
                own offers over HTTP (POST /permissions/offers).

                Examples:
                  realm-adapter permission offer create /shared/catalog write --expires-in 86400 --config adapter.json
                  realm-adapter permission offer list --config adapter.json
                  realm-adapter permission offer accept TOKEN --user bob --config adapter.json
                  realm-adapter permission offer invalidate TOKEN-OR-ID --config adapter.json
                """,
            subcommands: [Create.self, List.self, Accept.self, Invalidate.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Make an offer and print its token.")
            @Argument(help: "The Realm's path.") var path: String
            @Argument(help: "read, write or manage (admin).") var level: String
            @Option(help: "Seconds until the offer expires (default: never).") var expiresIn: Int?
            @OptionGroup var options: ConfigOptions

            func run() async throws {
                try await reportingErrors {
                    guard let l = AccessLevel(name: level), l != .none else {
                        throw ValidationError("The level is read, write or manage.")
                    }
                    if let expiresIn, !(1...315_360_000).contains(expiresIn) {
                        throw ValidationError("--expires-in is a number of seconds, from 1 to 315360000 (ten years).")
                    }
                    let users = try options.userDirectory()
                    let (token, offer) = try users.addOffer(
                        path: path, level: l, creatorId: UserDirectory.operatorCreator,
                        expires: expiresIn.map { Date() + Double($0) })
                    print(token)
                    let until = offer.expires.map { " until \(Timestamp($0).iso8601)" } ?? ""
                    FileHandle.standardError.write(
                        Data("Offered \(l) on \(offer.path)\(until) (id \(offer.id.prefix(12))…)\n".utf8))
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List every offer, newest first.")
            @OptionGroup var options: ConfigOptions

            func run() async throws {
                try await reportingErrors {
                    let users = try options.userDirectory()
                    let offers = try users.offers(by: nil)
                    if offers.isEmpty { print("No offers.") }
                    let now = Date()
                    for o in offers {
                        let state =
                            o.invalidated
                            ? "withdrawn" : o.expires.map { $0 <= now ? "expired" : "open" } ?? "open"
                        let until = o.expires.map { Timestamp($0).iso8601 } ?? "never"
                        print("\(o.id)\t\(o.path)\t\(o.level)\t\(state)\texpires \(until)\tby \(o.creatorId)")
                    }
                }
            }
        }

        struct Accept: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Accept an offer for a user.")
            @Argument(help: "The offer's token.") var token: String
            @Option(help: "The user who gets the level.") var user: String
            @OptionGroup var options: ConfigOptions

            func run() async throws {
                try await reportingErrors {
                    let users = try options.userDirectory()
                    guard let u = try users.user(named: user) else {
                        throw RealmAdapterError(.invalidValue, "There is no user named \(user).")
                    }
                    let offer = try users.acceptOffer(token, by: u)
                    print("\(user) has \(offer.level) (at least) on \(offer.path)")
                }
            }
        }

        struct Invalidate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Withdraw an offer (who accepted it keeps what they got).")
            @Argument(help: "The offer's token, or its id (`offer list`).") var offer: String
            @OptionGroup var options: ConfigOptions

            func run() async throws {
                try await reportingErrors {
                    let users = try options.userDirectory()
                    let o = try users.invalidateOffer(offer, by: nil)
                    print("Withdrew the offer of \(o.level) on \(o.path)")
                }
            }
        }
    }
}
