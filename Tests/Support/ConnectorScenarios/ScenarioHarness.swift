import Foundation
import Logging
import RealmAdapter

/// A database the core's scenarios run against, through its connector: each connector's tests
/// provide one (a fresh SQLite file, a fresh Postgres database) and run the same ``Scenarios``.
public protocol ScenarioDatabase: Sendable {
    /// The registry that knows this database's type.
    var connectors: ConnectorRegistry { get }
    /// The `database` section, as JSON text, with `createSchema` on.
    var databaseSection: String { get }
    /// Runs SQL as an app would (not through the connector): the rows of the last statement, as text.
    func sql(_ text: String) async throws -> [[String?]]
    /// Whether the connector's stream keeps the database's transactions apart (the SQLite
    /// example's change log, polled, may join several into one).
    static var keepsTransactionsApart: Bool { get }
    /// Whether two transactions can write at once (not SQLite's one writer): the scenario of a
    /// slower transaction needs ``openTransaction(_:)``.
    static var writesConcurrently: Bool { get }
    /// Runs `text` in a transaction on a connection of its own and leaves it open; the answer
    /// commits it. Needed where ``writesConcurrently``.
    func openTransaction(_ text: String) async throws -> @Sendable () async throws -> Void
    /// The store a scenario runs on, given a fresh directory: by default the embedded store in it.
    func makeStore(in directory: String) async throws -> ScenarioStore
}

/// Where a scenario's Realms are: its `realm.store` text, the store, and what removes it.
public struct ScenarioStore {
    public let location: String
    public let store: RealmStore
    public let remove: () async -> Void

    public init(location: String, store: RealmStore, remove: @escaping () async -> Void) {
        self.location = location
        self.store = store
        self.remove = remove
    }
}

extension ScenarioDatabase {
    public static var keepsTransactionsApart: Bool { true }
    public static var writesConcurrently: Bool { false }
    public func openTransaction(_ text: String) async throws -> @Sendable () async throws -> Void {
        throw ScenarioFailure(description: "\(Self.self) cannot hold a transaction open")
    }
    public func makeStore(in directory: String) async throws -> ScenarioStore {
        ScenarioStore(location: directory, store: try RealmStore(directory: directory), remove: {})
    }
}

/// A scenario's expectation that did not hold.
public struct ScenarioFailure: Error, CustomStringConvertible {
    public let description: String
}

public func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw ScenarioFailure(description: message()) }
}

/// Polls `condition` until it holds, or fails naming `what`.
public func eventually(_ what: String, timeout: Duration = .seconds(20), _ condition: () async throws -> Bool)
    async throws
{
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw ScenarioFailure(description: "timed out waiting for: \(what)")
}

/// A store, a configuration and the daemon's two services over a ``ScenarioDatabase``; a
/// connector's own tests use it with their own schema and configuration members.
public struct ScenarioHarness<Database: ScenarioDatabase> {
    public let database: Database
    public let config: Configuration
    public let mapping: Mapping
    public let store: RealmStore
    let logger: Logger

    public static var schema: String {
        """
        [{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "note": "string?"}}]
        """
    }

    /// - Parameter members: more top-level members of the configuration (`"mapping": {…}`).
    init(_ database: Database, store: ScenarioStore, schema: String, members: String) throws {
        self.database = database
        config = try Configuration(
            json: try JSONValue(
                parsing: """
                    {"realm": {"store": "\(store.location)", "path": "/items", "adapterName": "scenario"},
                     "database": \(database.databaseSection), "schema": \(schema)\(members.isEmpty ? "" : ", " + members)}
                    """), environment: [:], connectors: database.connectors)
        mapping = try Mapping(config)
        self.store = store.store
        var logger = Logger(label: "scenario")
        logger.logLevel = ProcessInfo.processInfo.environment["REALM_ADAPTER_TEST_DEBUG"] != nil ? .debug : .warning
        self.logger = logger
    }

    /// Runs `body` over a fresh store, the Realm `/items` of `schema` (default ``schema``).
    public static func run(
        _ database: Database, schema: String = Self.schema, members: String = "",
        _ body: (ScenarioHarness) async throws -> Void
    ) async throws {
        let dir = NSTemporaryDirectory() + "realm-adapter-scenario-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try await database.makeStore(in: dir)
        do {
            try await body(try ScenarioHarness(database, store: store, schema: schema, members: members))
        } catch {
            await store.remove()
            throw error
        }
        await store.remove()
    }

    public func connector() throws -> any DatabaseConnector {
        try database.connectors.connector(config, logger: logger)
    }

    /// Runs `body` while the daemon runs, and ends it as `ending` says.
    @discardableResult
    public func withDaemon(_ ending: InProcessDaemon.Ending = .graceful, _ body: () async throws -> Void) async throws
        -> Error?
    {
        let connector = try connector()
        let start = try await connector.prepare(mapping)
        try DatabaseToRealmService.requireStoreFollows(store, source: connector.sourceName, start: start)
        return try await InProcessDaemon.run(
            connector, configuration: config, mapping: mapping, store: store, logger: logger, ending: ending, body)
    }

    /// `realm-adapter load`, in process.
    public func load() async throws -> LoadSummary {
        let connector = try connector()
        let adapter = try Adapter(
            store: store, name: config.realm.adapterName, pathRegex: config.realm.effectivePathRegex)
        let loader = Loader(
            store: store, mapping: mapping, adapter: adapter, source: connector.sourceName,
            configuration: config.loader, logger: logger)
        defer { Task { await connector.shutdown() } }
        return try await loader.load(from: connector, plan: try LoadPlan(mapping, only: nil), partial: false)
    }

    /// Item objects of the Realm as (id, n, note), by id; empty while the Realm does not exist.
    public func realmItems() throws -> [[String?]] {
        guard try store.contains("/items") else { return [] }
        return try store.objects(of: "Item", in: "/items").map { o -> [String?] in
            ["id", "n", "note"].map { o.values[$0].flatMap(Self.text) }
        }.sorted { Int($0[0]!)! < Int($1[0]!)! }
    }

    /// Item rows of the database as (id, n, note), by id.
    public func databaseItems() async throws -> [[String?]] {
        try await database.sql(#"SELECT id, n, note FROM "Item" ORDER BY id"#)
    }

    public static func text(_ v: Value) -> String? {
        switch v {
        case .int(let i): String(i)
        case .string(let s): s
        case .null: nil
        default: v.description
        }
    }

    /// Applies instructions to the Realm as an app would (origin `app`).
    public func realmWrite(_ instructions: [Instruction]) throws {
        try store.apply(instructions, to: "/items", origin: "app")
    }

    /// The Realm's history as (origin, instruction count) per version.
    public func history() throws -> [RealmTransaction] {
        try store.history(of: "/items")
    }
}
