import Logging

/// One kind of database the adapter syncs with, chosen by `database.type` through a
/// ``ConnectorRegistry`` (ARCHITECTURE.md: Layers).
///
/// It decodes its own settings of the `database` section and builds, from the section, what
/// the commands need: the connector (the daemon's two directions, the loader's snapshot,
/// `status`) and the description of an existing database that `init` turns into a starting
/// configuration. Adding a connector means a module with one of these and one registration
/// line (`Sources/realm-adapter/Connectors.swift`).
public protocol ConnectorFactory: Sendable {
    /// `database.type` (`postgres`).
    var type: String { get }
    /// The database schema (namespace) of the synced tables when `database.schema` is absent.
    var defaultSchema: String { get }
    /// The server's port when neither `database.port` nor the URL gives one.
    var defaultPort: Int { get }
    /// URL schemes that name this kind of database (`postgresql`), for `init --database`.
    var urlSchemes: [String] { get }
    /// Whether the database is a server, reached through `url` or `host` (one of them is then
    /// required); a database in a file says where it is in settings of its own.
    var needsServer: Bool { get }
    /// The environment variable `init` reads the password from and names in the configuration it
    /// writes (`passwordEnv`): the one this database's own tools use (`PGPASSWORD` for Postgres).
    var passwordVariable: String { get }

    /// Reads this connector's own members of the `database` section; the common ones
    /// (``DatabaseConfiguration``) are read already. The caller rejects the members that
    /// nobody read, naming their JSON path.
    func settings(_ reader: inout JSONObjectReader) throws -> any ConnectorSettings

    /// The connector for a configuration's database section (of this factory's type).
    func connector(
        _ database: DatabaseConfiguration, customTypes: [String: ScalarType],
        logger: Logger
    ) throws -> any DatabaseConnector

    /// Reads the tables of `schema` in an existing database (`realm-adapter init`).
    func describe(
        _ connection: ConnectionString, password: Secret?, schema: String,
        logger: Logger
    ) async throws -> DatabaseDescription

    /// This connector's members of a starting configuration for `database` (Postgres: a slot and a
    /// publication of its own; a file database: its file).
    func startingSettings(for database: DatabaseDescription) -> [JSONValue.Member]
}

extension ConnectorFactory {
    public var urlSchemes: [String] { [type] }
    public var needsServer: Bool { true }
    public var passwordVariable: String { "PGPASSWORD" }
    public func startingSettings(for database: DatabaseDescription) -> [JSONValue.Member] { [] }
}

/// A connector's own settings of the `database` section (Postgres: slot, publication, sslmode).
public protocol ConnectorSettings: Sendable {
    /// The settings worth showing in `realm-adapter validate`, one phrase each (flags that are
    /// on, names that differ from their defaults).
    var summary: [String] { get }
    /// Where the database is, for messages, when it is not a server (a file); nil for servers.
    var location: String? { get }
}

extension ConnectorSettings {
    public var location: String? { nil }
}

/// A connector as the commands use it: both sync directions (``RelationalConnector``), the
/// loader's snapshot (``LoadableConnector``), and what `status` and `load --dry-run` show.
public protocol DatabaseConnector: RelationalConnector, LoadableConnector {
    /// What the database holds of the sync: the Realm versions applied, the dead letters, and
    /// the change stream's state.
    func statusReport(adapter: String) async throws -> DatabaseStatus

    /// A read-only snapshot for `load --dry-run`: it checks the mapping, creates nothing and
    /// writes nothing.
    func dryRunSnapshot(_ mapping: Mapping) async throws -> LoadSnapshot

    /// Removes what the adapter created in the database for its own use (`realm-adapter
    /// teardown`: Postgres's slot, publication, origins, state and dead-letter tables), never the
    /// mapped tables or their data; returns what it removed, one phrase each. With `dryRun`,
    /// what it would remove, and nothing is.
    func teardown(adapter: String, dryRun: Bool) async throws -> [String]

    /// A source position as people read it (Postgres: the LSN).
    func describe(position: String) -> String

    /// How many bytes of its log the database keeps for the change stream (Postgres: the WAL
    /// the replication slot retains), or nil if it does not say. For metrics.
    func retainedBytes() async throws -> Int64?
}

extension DatabaseConnector {
    public func describe(position: String) -> String { position }

    public func retainedBytes() async throws -> Int64? { nil }

    public func teardown(adapter: String, dryRun: Bool) async throws -> [String] {
        throw RealmAdapterError.teardownNotWritten()
    }
}

/// What `realm-adapter status` shows of the database side.
public struct DatabaseStatus: Sendable {
    /// Realm versions applied to the database, per path.
    public var applied: [String: Int64]
    /// Realm transactions the database rejected, kept aside (`ignoreSQLErrors`, `dead-letter`).
    public var deadLetters: Int
    /// Database row changes that no Realm could hold, kept aside (``RelationalConnector/setAside(_:)``).
    public var deadRows: Int
    /// Whether a daemon reads the change stream now (`dead-letter` refuses then).
    public var streaming: Bool
    /// The change stream as messages name it (`slot realm_adapter`).
    public var streamName: String
    /// Lines about the change stream (Postgres: the slot's position and retained WAL).
    public var stream: [String]
    /// Conditions that need someone's attention (`status` exits with code 2).
    public var warnings: [String]
    /// The newest of the dead letters (at most ``listed``), newest first.
    public var latestDeadLetters: [DeadLetter]
    /// The newest of the dead rows (at most ``listed``), newest first.
    public var latestDeadRows: [DeadRow]

    /// How many dead letters and dead rows a status lists (it counts them all).
    public static let listed = 10
    /// How many characters of a dead letter's instructions or a dead row's values a status
    /// carries (the table keeps them whole).
    public static let excerptLength = 500

    public init(
        applied: [String: Int64], deadLetters: Int, deadRows: Int, streaming: Bool, streamName: String,
        stream: [String], warnings: [String], latestDeadLetters: [DeadLetter] = [], latestDeadRows: [DeadRow] = []
    ) {
        self.applied = applied
        self.deadLetters = deadLetters
        self.deadRows = deadRows
        self.streaming = streaming
        self.streamName = streamName
        self.stream = stream
        self.warnings = warnings
        self.latestDeadLetters = latestDeadLetters
        self.latestDeadRows = latestDeadRows
    }

    /// A Realm transaction the database rejected, as its dead-letter table keeps it.
    public struct DeadLetter: Sendable, Equatable {
        public var path: String
        public var version: Int64
        /// When it was set aside, as the database writes a time (UTC).
        public var failedAt: String
        public var error: String
        /// The start of its instructions as JSON (``DatabaseStatus/excerptLength`` characters).
        public var instructions: String

        public init(path: String, version: Int64, failedAt: String, error: String, instructions: String) {
            self.path = path
            self.version = version
            self.failedAt = failedAt
            self.error = error
            self.instructions = instructions
        }
    }

    /// A database row change no Realm could hold, as the dead-row table keeps it.
    public struct DeadRow: Sendable, Equatable {
        public var table: String
        /// The change's source position, as people read it.
        public var position: String
        public var failedAt: String
        public var error: String
        /// The start of the row's values as JSON (``DatabaseStatus/excerptLength`` characters).
        public var row: String

        public init(table: String, position: String, failedAt: String, error: String, row: String) {
            self.table = table
            self.position = position
            self.failedAt = failedAt
            self.error = error
            self.row = row
        }
    }
}
