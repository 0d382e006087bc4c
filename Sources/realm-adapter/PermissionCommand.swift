import ArgumentParser
import RealmAdapter
import RealmServer

struct PermissionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permission",
        abstract: "Grant, take back and list what users may do with Realm paths (read < write < manage).",
        discussion: """
            A grant is to one user (--user NAME) or to everyone (the path's default, --everyone). \
            A user's level on a path is the higher of the two; users manage their own paths \
            (/<user id>/…) and admins every path without grants.

            Examples:
              realm-adapter permission grant read /shared/catalog --everyone --config adapter.json
              realm-adapter permission grant write /shared/catalog --user bob --config adapter.json
              realm-adapter permission revoke /shared/catalog --user bob --config adapter.json
              realm-adapter permission list --config adapter.json
              realm-adapter permission offer create /shared/catalog read --config adapter.json
            """,
        subcommands: [Grant.self, Revoke.self, List.self, Offer.self])

    struct Who: ParsableArguments {
        @Option(help: "The user's name.") var user: String?
        @Flag(help: "Everyone (the path's default).") var everyone = false

        func userId(_ users: UserDirectory) throws -> String? {
            switch (user, everyone) {
            case (let name?, false):
                guard let u = try users.user(named: name) else {
                    throw RealmAdapterError(.invalidValue, "There is no user named \(name).")
                }
                return u.id
            case (nil, true): return nil
            default: throw ValidationError("Give either --user NAME or --everyone.")
            }
        }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Grant a level on a path.")
        @Argument(help: "read, write or manage.") var level: String
        @Argument(help: "The Realm's path.") var path: String
        @OptionGroup var who: Who
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                guard let l = AccessLevel(name: level), l != .none else {
                    throw ValidationError("The level is read, write or manage (revoke takes one back).")
                }
                let users = try options.userDirectory()
                try users.grant(l, on: path, to: try who.userId(users))
                print("Granted \(l) on \(path) to \(who.user ?? "everyone")")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take back what was granted on a path.")
        @Argument(help: "The Realm's path.") var path: String
        @OptionGroup var who: Who
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let users = try options.userDirectory()
                try users.grant(.none, on: path, to: try who.userId(users))
                print("Revoked what \(who.user ?? "everyone") had on \(path)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the grants (on one path, or all).")
        @Argument(help: "A Realm's path.") var path: String?
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let users = try options.userDirectory()
                let names = Dictionary(uniqueKeysWithValues: try users.users().map { ($0.id, $0.name) })
                let grants = try users.permissions(on: path)
                if grants.isEmpty { print("No grants\(path.map { " on \($0)" } ?? "").") }
                for g in grants {
                    print("\(g.path)\t\(g.userId.map { names[$0] ?? $0 } ?? "everyone")\t\(g.level)")
                }
            }
        }
    }
}
