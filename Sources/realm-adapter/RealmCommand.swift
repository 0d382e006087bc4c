import ArgumentParser
import Foundation
import Logging
import RealmAdapter

struct RealmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm",
        abstract: "Look into and write to a Realm store.",
        discussion: """
            Every subcommand works on a store, given by --store (a directory or a postgresql:// URL), \
            or by --config (the configuration's realm.store), or ./realms by default.

              realm-adapter realm list --store ./realms
              realm-adapter realm schema /SQLDemo
              realm-adapter realm dump /SQLDemo --type Bus
              realm-adapter realm history /SQLDemo --after 10
              realm-adapter realm apply /SQLDemo --file changes.json
            """,
        subcommands: [List.self, ShowSchema.self, Dump.self, History.self, Apply.self]
    )
}

/// Which store a `realm` subcommand works on.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store directory, or a Postgres store's URL (postgresql://user@host/db).", valueName: "dir|url"))
    var store: String?

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("Take the store directory from this configuration's realm.store.", valueName: "file"))
    var config: String?

    @OptionGroup var global: GlobalOptions

    /// Opens the store. A store that does not exist yet is an error for reading commands,
    /// so a mistyped directory is not silently created.
    func open(creating: Bool = false) throws -> (RealmStore, Logger) {
        LoggingBootstrap.early(global.logFormat.flatMap(LogFormat.init))
        let configuration = try config.map { try Configuration.load(file: $0, connectors: connectors) }
        let logger = global.bootstrap(config: configuration)
        let location =
            try store.map(StoreLocation.init(commandLine:)) ?? configuration.map { StoreLocation($0.realm) }
            ?? StoreLocation(commandLine: "./realms")
        if !creating, try !location.exists(logger: logger) { throw RealmAdapterError.noStore(location.text) }
        logger.debug("Opening store", metadata: ["store": "\(location.text)"])
        return (try location.open(logger: logger), logger)
    }
}

extension RealmCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the Realms in a store, with their versions and types.")

        @OptionGroup var options: StoreOptions

        func run() async throws {
            try await reportingErrors {
                let (store, _) = try options.open()
                let realms = try store.summaries()
                if realms.isEmpty {
                    print("(no Realms)")
                    return
                }
                for r in realms {
                    let counts = r.counts.map { "\($0.type) \($0.count)" }
                    print(
                        "\(r.path)  version \(r.version)  \(counts.isEmpty ? "(no types)" : counts.joined(separator: ", "))"
                    )
                }
            }
        }
    }

    struct ShowSchema: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "schema", abstract: "Show a Realm's schema.",
            discussion: """
                With --json, prints it in the Realm JS model syntax a configuration's "schema" takes. With \
                --models, as the model classes an app declares (Studio's schema page offers the same), e.g.
                  realm-adapter realm schema /SQLDemo --models swift > Models.swift
                """)

        @Argument(help: "The Realm's path, e.g. /SQLDemo.") var path: String
        @Flag(help: "Print JSON (Realm JS model syntax) instead of text.") var json = false
        @Option(help: "Print model classes in this language: swift, kotlin, java, typescript or javascript.")
        var models: ModelLanguage?
        @OptionGroup var options: StoreOptions

        func run() async throws {
            try await reportingErrors {
                let (store, _) = try options.open()
                let schema = try store.schema(of: path)
                if json {
                    print(schema.json.serialized(pretty: true))
                    return
                }
                if let models {
                    print(schema.modelDefinitions(models), terminator: "")
                    return
                }
                // The permission metadata's types come last, said to be the system's.
                let system = schema.types.filter { PermissionTypes.isSystemType($0.name) }
                for t in schema.types.filter({ !PermissionTypes.isSystemType($0.name) }) + system {
                    if t.name == system.first?.name {
                        print("System types (fine-grained permissions: realm-adapter role, permission --privileges):")
                    }
                    print("\(t.name)" + (t.primaryKey.map { " (primary key \($0))" } ?? " (no primary key)"))
                    for p in t.properties {
                        var extras: [String] = []
                        if p.isIndexed { extras.append("indexed") }
                        if let d = p.defaultValue { extras.append("default \(d)") }
                        if case .linkingObjects(let o, let prop) = p.type {
                            print("  \(p.name): linkingObjects from \(o).\(prop)")
                        } else {
                            print(
                                "  \(p.name): \(p.typeString)"
                                    + (extras.isEmpty ? "" : "  (\(extras.joined(separator: ", ")))"))
                        }
                    }
                }
            }
        }
    }

    struct Dump: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a Realm's objects as JSON.",
            discussion: """
                Prints one JSON document: {"Type": [objects...], ...}, each object with its \
                "_identity" first. Objects are streamed, so large Realms do not fill memory.
                """)

        @Argument(help: "The Realm's path.") var path: String
        @Option(help: ArgumentHelp("Only this type (repeatable).", valueName: "type")) var type: [String] = []
        @OptionGroup var options: StoreOptions

        func run() async throws {
            try await reportingErrors {
                let (store, _) = try options.open()
                let schema = try store.schema(of: path)
                let types = type.isEmpty ? schema.types.map(\.name) : type
                for t in types where schema[type: t] == nil {
                    throw RealmAdapterError.noSuchType(t, path: path, types: schema.types.map(\.name))
                }
                var out = FileHandleOutputStream.standardOutput
                print("{", to: &out)
                for (i, t) in types.enumerated() {
                    print("  \(JSONValue.string(t).serialized()): [", terminator: "", to: &out)
                    var first = true
                    try store.forEachObject(of: t, in: path) { object in
                        print((first ? "\n    " : ",\n    ") + object.json.serialized(), terminator: "", to: &out)
                        first = false
                    }
                    print(first ? "]" : "\n  ]", terminator: i == types.count - 1 ? "\n" : ",\n", to: &out)
                }
                print("}", to: &out)
            }
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a Realm's transactions after a version, as JSON lines.",
            discussion: """
                One line per transaction: {"version", "origin", "committed_at", "instructions"}, \
                instructions in the JSON form that `realm apply` accepts.
                """)

        @Argument(help: "The Realm's path.") var path: String
        @Option(help: "Show transactions after this version (default 0: all that are kept).") var after: Int64 = 0
        @Option(help: "At most this many transactions.") var limit: Int = .max
        @OptionGroup var options: StoreOptions

        func validate() throws {
            guard after >= 0 else { throw ValidationError("--after must be 0 or more.") }
            guard limit > 0 else { throw ValidationError("--limit must be positive.") }
        }

        func run() async throws {
            try await reportingErrors {
                let (store, _) = try options.open()
                let schema = try store.schema(of: path)
                for tx in try store.history(of: path, after: after, limit: limit) {
                    var fields: [JSONValue.Member] = [
                        .init("version", .int(tx.version)),
                        .init("origin", .string(tx.origin)),
                        .init("committed_at", .string(tx.committedAt.iso8601)),
                    ]
                    if let p = tx.sourcePosition {
                        fields += [.init("source", .string(p.source)), .init("source_position", .string(p.position))]
                    }
                    fields.append(.init("instructions", .array(tx.instructions.map { $0.json(schema: schema) })))
                    let line = JSONValue.object(fields)
                    print(line.serialized())
                }
            }
        }
    }

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply a JSON file of instructions to a Realm as one transaction.",
            discussion: """
                The file holds a JSON array of instructions (or a single one), in the form \
                `realm history` prints. The Realm is created if it does not exist; ADD_TYPE \
                instructions give it types. The transaction is all-or-nothing: if any instruction \
                breaks the schema, nothing is written and the error names the instruction.

                Example file:
                  [
                    {"type": "ADD_TYPE", "object_type": "Task", "primary_key": "id",
                     "properties": {"id": "int", "title": "string", "tags": "string[]"}},
                    {"type": "INSERT", "object_type": "Task", "identity": 1,
                     "values": {"id": 1, "title": "Try realm-adapter", "tags": ["demo"]}},
                    {"type": "LIST_INSERT", "object_type": "Task", "identity": 1,
                     "property": "tags", "list_index": 1, "value": "cli"}
                  ]
                """)

        @Argument(help: "The Realm's path.") var path: String
        @Option(
            name: .shortAndLong,
            help: ArgumentHelp("The instructions file, or - for standard input.", valueName: "file"))
        var file: String
        @Option(help: "The origin tag recorded with the transaction.") var origin = "cli"
        /// Instructions parsed ahead and applied together (consecutive INSERTs in bulk).
        static let batchSize = 1000
        @OptionGroup var options: StoreOptions

        func run() async throws {
            try await reportingErrors {
                let handle: FileHandle
                if file == "-" {
                    handle = .standardInput
                } else {
                    guard let h = FileHandle(forReadingAtPath: file) else {
                        throw RealmAdapterError.instructionsUnreadable(file)
                    }
                    handle = h
                }
                let (store, logger) = try options.open(creating: true)
                // Streamed: memory for a batch of instructions and what history keeps, not for the file.
                var reader = JSONArrayReader(handle)
                let (count, version) = try store.write(to: path, origin: origin) { tx in
                    var batch: [Instruction] = []
                    while let element = try reader.next() {
                        batch.append(try Instruction(json: element, path: "[\(reader.index - 1)]"))
                        if batch.count == Self.batchSize {
                            try tx.apply(batch)
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                    try tx.apply(batch)
                    return tx.count
                }
                logger.debug(
                    "Applied a transaction",
                    metadata: ["realm.path": "\(path)", "instructions": "\(count)", "version": "\(version)"])
                print(
                    "Applied \(count) instruction\(count == 1 ? "" : "s") to \(path); it is now at version \(version).")
            }
        }
    }
}

/// `print(…, to:)` straight to standard output without building the whole document first.
struct FileHandleOutputStream: TextOutputStream {
    let handle: FileHandle
    static var standardOutput: FileHandleOutputStream { FileHandleOutputStream(handle: .standardOutput) }
    mutating func write(_ string: String) { handle.write(Data(string.utf8)) }
}

extension RealmAdapterError {
    static func noStore(_ directory: String) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable,
            "There is no Realm store in '\(directory)'. Give the right --store (or --config), or write to it "
                + "first with `realm-adapter realm apply`.",
            context: ["store": directory])
    }

    /// `command` reads a store that is not there: a mistyped `realm.store` must not become a new, empty store.
    static func noStore(_ directory: String, for command: String) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable,
            "There is no Realm store in '\(directory)' (the configuration's realm.store): `\(command)` reads an "
                + "existing store. Check realm.store, or make the store first with `realm-adapter load` or `run`.",
            context: ["store": directory])
    }

    static func noSuchType(_ type: String, path: String, types: [String]) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation, "\(path) has no type '\(type)'. Its types: \(types.joined(separator: ", ")).",
            context: ["realm.path": path, "type": type])
    }

    static func instructionsUnreadable(_ file: String) -> RealmAdapterError {
        RealmAdapterError(.invalidInstruction, "Cannot read the instructions file '\(file)'.", context: ["file": file])
    }
}

extension ModelLanguage: ExpressibleByArgument {}
