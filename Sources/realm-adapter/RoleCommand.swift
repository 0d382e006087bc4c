import ArgumentParser
import RealmAdapter
import RealmServer

/// `role`: the roles of a Realm's fine-grained permissions, and their members.
struct RoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role",
        abstract: "Add, remove and list the roles of a Realm's fine-grained permissions, and their members.",
        discussion: """
            Privileges are granted to roles (realm-adapter permission grant --role), and users are \
            members of roles. Every user is in `everyone` and in their personal role \
            __User:<user id>. Each change is one Realm transaction; a Realm without fine-grained \
            permissions gets them with its first role (everyone keeps every privilege until lowered).

            Examples:
              realm-adapter role add /shared/docs editors --config adapter.json
              realm-adapter role add-member /shared/docs editors --user alice --config adapter.json
              realm-adapter role members /shared/docs --config adapter.json
              realm-adapter role remove-member /shared/docs editors --user alice --config adapter.json
              realm-adapter role remove /shared/docs editors --config adapter.json
            """,
        subcommands: [Add.self, Remove.self, Members.self, AddMember.self, RemoveMember.self])

    /// One change of the roles, as one Realm transaction of the operator's (origin `cli`), then `done` said.
    static func change(
        _ options: ConfigOptions, _ path: String, _ done: String, _ body: (inout WriteTransaction) throws -> Void
    ) async throws {
        try await reportingErrors { try write(options, path, done, body) }
    }

    /// ``change(_:_:_:_:)`` without reporting its errors.
    static func write(
        _ options: ConfigOptions, _ path: String, _ done: String, _ body: (inout WriteTransaction) throws -> Void
    ) throws {
        try options.store(holding: path).write(to: path, origin: "cli") { try body(&$0) }
        print(done)
    }

    struct Named: ParsableArguments {
        @Argument(help: "The Realm's path.") var path: String
        @Argument(help: "The role's name.") var role: String
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a role (without members).")
        @OptionGroup var named: Named
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await change(options, named.path, "Added the role \(named.role) to \(named.path)") {
                try $0.addRole(named.role, by: .unrestricted)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a role; what it was granted goes with it.")
        @OptionGroup var named: Named
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await change(options, named.path, "Removed the role \(named.role) from \(named.path)") {
                try $0.removeRole(named.role, by: .unrestricted)
            }
        }
    }

    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the roles and their members (user names).")
        @Argument(help: "The Realm's path.") var path: String
        @Argument(help: "Only this role.") var role: String?
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let roles = try options.store(holding: path).roles(in: path).filter { role == nil || $0.name == role }
                if let role, roles.isEmpty { throw ValidationError("\(path) has no role \(role).") }
                if roles.isEmpty { print("\(path) has no fine-grained permissions (no roles).") }
                let names = Dictionary(
                    uniqueKeysWithValues: try options.userDirectory().users().map { ($0.id, $0.name) })
                for r in roles {
                    print("\(r.name)\t\(r.members.map { names[$0] ?? $0 }.joined(separator: ", "))")
                }
            }
        }
    }

    struct Member: ParsableArguments {
        @Argument(help: "The Realm's path.") var path: String
        @Argument(help: "The role's name.") var role: String
        @Option(help: "The user's name.") var user: String

        func userId(_ options: ConfigOptions) throws -> String {
            guard let u = try options.userDirectory().user(named: user) else {
                throw RealmAdapterError(.invalidValue, "There is no user named \(user) (realm-adapter user list).")
            }
            return u.id
        }
    }

    struct AddMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a user a member of a role.")
        @OptionGroup var member: Member
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let done = "\(member.user) is a member of \(member.role) in \(member.path)"
            try await reportingErrors {
                // Before the write: a Postgres store keeps the users in its own database, whose
                // write lock the lookup would wait for.
                let user = try member.userId(options)
                try write(options, member.path, done) { try $0.addMember(user, to: member.role, by: .unrestricted) }
            }
        }
    }

    struct RemoveMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a user out of a role.")
        @OptionGroup var member: Member
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let done = "\(member.user) is not a member of \(member.role) in \(member.path)"
            try await reportingErrors {
                let user = try member.userId(options)  // before the write, as for add-member
                try write(options, member.path, done) {
                    try $0.removeMember(user, from: member.role, by: .unrestricted)
                }
            }
        }
    }
}
