import ArgumentParser
import RealmAdapter
import RealmServer

struct PermissionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permission",
        abstract: "Grant, take back and list what users may do with Realm paths and inside Realms.",
        discussion: """
            Path permissions: a level (read < write < manage) on a path, to one user (--user NAME) \
            or to everyone (the path's default, --everyone). A user's level on a path is the higher \
            of the two; users manage their own paths (/<user id>/…) and admins every path.

            Fine-grained permissions (with --privileges): privileges of a role inside one Realm, at \
            the Realm level, on a type (--type T) or on one object (--type T --key K, for a type \
            with an ACL property, a list of __Permission). The role is --role R, --everyone, or a \
            user's personal role (--user NAME). Privileges: read, update, delete, setPermissions, \
            query, create, modifySchema, or all. Each level narrows the one above it.

            Examples:
              realm-adapter permission grant read /shared/catalog --everyone --config adapter.json
              realm-adapter permission grant write /shared/catalog --user bob --config adapter.json
              realm-adapter permission revoke /shared/catalog --user bob --config adapter.json
              realm-adapter permission list --config adapter.json
              realm-adapter permission offer create /shared/catalog read --config adapter.json
              realm-adapter permission revoke /shared/docs --everyone --privileges update,delete \
                --config adapter.json
              realm-adapter permission grant /shared/docs --role editors --privileges all --config adapter.json
              realm-adapter permission grant /shared/docs --user bob --privileges read --type Doc --key d1 \
                --config adapter.json
            """,
        subcommands: [Grant.self, Revoke.self, List.self, Offer.self])

    struct Who: ParsableArguments {
        @Option(help: "The user's name.") var user: String?
        @Flag(help: "Everyone (the path's default).") var everyone = false
        @Option(help: "A role of the Realm (fine-grained; with --privileges).") var role: String?

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

        /// The role a fine-grained grant names: --role, --everyone, or the user's personal role.
        func roleName(_ users: UserDirectory) throws -> String {
            if let role {
                guard user == nil, !everyone else { throw ValidationError("Give one of --role, --user or --everyone.") }
                guard !role.hasPrefix(PermissionTypes.personalRolePrefix) else {
                    throw ValidationError("A user's personal role is given by the user's name: --user NAME.")
                }
                return role
            }
            guard user != nil || everyone else { throw ValidationError("Give one of --role, --user or --everyone.") }
            return try userId(users).map(PermissionTypes.personalRole(of:)) ?? PermissionTypes.everyone
        }
    }

    /// A fine-grained grant's privileges and where they apply.
    struct Fine: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "Fine-grained privileges (comma-separated): read, update, delete, setPermissions, query, create, "
                    + "modifySchema, all."))
        var privileges: String?
        @Option(help: "A type: its class level (with --privileges).") var type: String?
        @Option(help: "An object's primary key: its ACL (with --type and --privileges).") var key: String?

        /// Refuses --type and --key without --privileges: path permissions have neither.
        func checkPathLevel() throws {
            guard privileges == nil, type != nil || key != nil else { return }
            throw ValidationError(
                "--type and --key are for fine-grained privileges: give --privileges too (path permissions apply to "
                    + "the whole Realm).")
        }

        /// Changes the role's privileges in the Realm at `path` (as the operator, unchecked).
        func apply(granted: Bool, path: String, _ who: Who, _ options: ConfigOptions) throws {
            let p = try Privileges(names: privileges ?? "")
            let role = try who.roleName(try options.userDirectory())
            let store = try options.store(holding: path)
            let schema = try store.schema(of: path)
            let target: PermissionTarget
            switch (type, key) {
            case (nil, nil): target = .realm
            case (let t?, nil): target = .type(t)
            case (let t?, let k?):
                let isInt = schema[type: t]?.primaryKeyProperty?.type == .scalar(.int)
                let given = isInt ? Int64(k).map(Value.int) ?? .string(k) : .string(k)
                target = .object(t, try given.coercedKey(of: t, in: schema))
            case (nil, _?): throw ValidationError("--key names an object of a type: give --type too.")
            }
            try store.write(to: path, origin: "cli") {
                try $0.setPrivileges(p, granted: granted, role: role, on: target, by: .unrestricted)
            }
            let now = try store.permissions(on: target, in: path)?.first { $0.role == role }?.privileges ?? []
            print("\(role) now holds \(now) at \(target) in \(path)")
        }
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Grant a level on a path.")
        @Argument(help: "read, write or manage (path permissions; not with --privileges).") var level: String
        @Argument(help: "The Realm's path.") var path: String?
        @OptionGroup var who: Who
        @OptionGroup var fine: Fine
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                if fine.privileges != nil {
                    guard path == nil else { throw ValidationError("With --privileges, give the path alone.") }
                    return try fine.apply(granted: true, path: level, who, options)
                }
                try fine.checkPathLevel()
                guard let path else { throw ValidationError("Give a level and a path (or --privileges).") }
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
        @OptionGroup var fine: Fine
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                if fine.privileges != nil { return try fine.apply(granted: false, path: path, who, options) }
                try fine.checkPathLevel()
                let users = try options.userDirectory()
                try users.grant(.none, on: path, to: try who.userId(users))
                print("Revoked what \(who.user ?? "everyone") had on \(path)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the grants (on one path, or all).",
            discussion: """
                With a path whose Realm has fine-grained permissions, also lists them: each role's \
                privileges at the Realm level and on each type that has its own (objects' ACLs are \
                read through GraphQL's _permissions).
                """)
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
                guard let path, let store = try? options.store(holding: path) else { return }
                let schema = try store.schema(of: path)
                guard schema.hasPermissions else { return }
                print("Fine-grained permissions in \(path) (role, privileges, where):")
                let targets = [PermissionTarget.realm] + schema.types.map { .type($0.name) }
                for target in targets {
                    for p in try store.permissions(on: target, in: path) ?? [] {
                        print("\(p.role)\t\(p.privileges)\t\(target)")
                    }
                }
            }
        }
    }
}
