import ArgumentParser
import Foundation
import RealmAdapter
import RealmServer

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Manage the users of `realm-adapter serve` (kept with the store: server.sqlite, or its database).",
        discussion: """
            Passwords are read from standard input (the first line), or from the environment \
            variable --password-env names: never from the command line, where other users of the \
            machine could see them. They are kept as bcrypt hashes.

            Examples:
              echo "$PASSWORD" | realm-adapter user add alice --admin --config adapter.json
              realm-adapter user list --config adapter.json
              realm-adapter user token alice --config adapter.json      # a user's refresh token
              realm-adapter user admin-token create backend --config adapter.json   # a backend's key
            """,
        subcommands: [Add.self, List.self, Remove.self, Passwd.self, Token.self, AdminToken.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user.")
        @Argument(help: "The user's name (what they log in with).") var name: String
        @Flag(help: "An admin: every level on every Realm.") var admin = false
        @OptionGroup var password: PasswordOption
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let users = try options.userDirectory()
                let user = try users.add(name: name, password: try password.read(), admin: admin)
                print("Added \(admin ? "admin " : "")\(name) (id \(user.id); /~/ is /\(user.id)/ for them)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let users = try options.userDirectory()
                    .users()
                if users.isEmpty { print("No users yet: `realm-adapter user add NAME` adds one.") }
                for u in users {
                    let provider = u.provider == "password" ? "" : "\t" + u.provider
                    print("\(u.name)\t\(u.id)\(u.isAdmin ? "\tadmin" : "")\(provider)")
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a user and what was granted to them (tokens they hold stop working).")
        @Argument(help: "The user's name.") var name: String
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let users = try options.userDirectory()
                guard try users.remove(name: name) else {
                    throw RealmAdapterError(.invalidValue, "There is no user named \(name).")
                }
                print("Removed \(name)")
            }
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a user's password.")
        @Argument(help: "The user's name.") var name: String
        @OptionGroup var password: PasswordOption
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let users = try options.userDirectory()
                try users.setPassword(name: name, password: try password.read())
                print("Set the password of \(name)")
            }
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a refresh token for a user: an admin's is a backend's key to every Realm.",
            discussion: "It lasts server.refreshTokenLifetime and needs the signing key in the environment.")
        @Argument(help: "The user's name.") var name: String
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            try await reportingErrors {
                let c = try options.load(needsSchema: false).0
                let users = try StoreLocation(c.realm).userDirectory()
                guard let user = try users.user(named: name) else {
                    throw RealmAdapterError(.invalidValue, "There is no user named \(name).")
                }
                let tokens = await Tokens(key: try c.server.signingKey(), configuration: c.server)
                print(try await tokens.refreshToken(for: user).token)
            }
        }
    }
}

/// Where a password comes from: standard input, or an environment variable.
struct PasswordOption: ParsableArguments {
    @Option(
        name: .customLong("password-env"),
        help: ArgumentHelp(
            "Read the password from this environment variable (default: standard input).", valueName: "var"))
    var variable: String?

    func read() throws -> String {
        if let variable {
            guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
                throw RealmAdapterError(.invalidValue, "The environment variable \(variable) is not set (or empty).")
            }
            return value
        }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw RealmAdapterError(
                .invalidValue, "No password on standard input: pipe one in, or use --password-env VARIABLE.")
        }
        return line
    }
}
