import Foundation
import GRDB
import Logging
import RealmAdapter
import Synchronization

/// A relational connector for an app's SQLite database: the example of writing one.
///
/// Database → Realm: triggers log each row change (``SQLiteChangeLog``), and a poll every
/// `pollIntervalMs` streams the log in commit order. Rows leave the log (every half second) once
/// the Realms hold them, so a restart replays what came after, which the core skips by position.
///
/// Realm → database: each Realm transaction is one SQLite transaction that also upserts its marker
/// `(adapter, path, version)` into `realm_adapter_state`, tagged as the adapter's own so that the
/// log brings it back as own (no echo). The loader reads a snapshot whose end is the hand-off
/// position. One daemon per database file: it holds a lock file beside it.
///
/// It supports tables with a primary key of their own, scalar columns and foreign keys (to-one
/// links); lists and database keys are refused by ``prepare(_:)`` with the property named.
/// GRDB runs every statement on its own queues, never on the cooperative pool.
public final class SQLiteConnector: DatabaseConnector {
    public let configuration: DatabaseConfiguration
    public let options: SQLiteOptions
    let logger: Logger
    let pool: DatabasePool

    private struct State {
        var mapping: Mapping?
        var lock: FileLock?
        /// The highest sequence number the Realms hold (``processed(_:)``), and what was deleted.
        var processed: Int64 = 0
        var deleted: Int64 = 0
    }
    private let state = Mutex(State())

    public var sourceName: String { "sqlite:\(options.file)" }

    public init(configuration: DatabaseConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.options = configuration.sqlite
        self.logger = logger
        guard configuration.createDatabase || FileManager.default.fileExists(atPath: options.file) else {
            throw Self.fileMissing(options.file, createsIt: true)
        }
        var c = GRDB.Configuration()
        c.busyMode = .timeout(10)
        pool = try DatabasePool(path: options.file, configuration: c)
    }

    var lockPath: String { options.file + ".realm-adapter.lock" }

    // MARK: Preparing

    /// Refuses what this connector cannot sync, naming it.
    func check(_ mapping: Mapping) throws {
        var problems: [String] = []
        for t in mapping.tables {
            for l in t.linkLists {
                problems.append("\(t.type.name).\(l.property.name): lists of links are not supported")
            }
            for c in t.columns {
                if case .array = c.kind {
                    problems.append("\(t.type.name).\(c.property.name): lists of values are not supported")
                }
            }
            if t.databaseKey != nil { problems.append("\(t.type.name): databasePrimaryKey is not supported") }
            if t.compoundKey != nil { problems.append("\(t.type.name): compound keys are not supported") }
        }
        guard problems.isEmpty else {
            throw Self.mismatch(problems, heading: "The sqlite connector cannot sync this mapping")
        }
    }

    /// The log tables, the mapped tables (with `createSchema`) and their triggers; throws naming
    /// each missing table or column. Says whether the log existed before.
    func prepareDatabase(_ db: Database, _ mapping: Mapping) throws -> Bool {
        let existed = try db.tableExists(SQLiteChangeLog.table)
        try SQLiteChangeLog.createTables(db)
        if configuration.createSchema { try createTables(db, mapping) }
        var problems: [String] = []
        for t in mapping.tables {
            guard try db.tableExists(t.table) else {
                problems.append("table \(t.table) does not exist")
                continue
            }
            let columns = Set(try db.columns(in: t.table).map(\.name))
            for c in t.columns where !columns.contains(c.column) {
                problems.append("\(t.table).\(c.column) does not exist")
            }
        }
        guard problems.isEmpty else {
            throw Self.mismatch(
                problems, heading: "The database does not match the mapping",
                hint: "\n(database.createSchema creates missing tables.)")
        }
        for t in mapping.tables { try SQLiteChangeLog.follow(db, table: t.table, keyColumns: t.keyColumns) }
        try SQLiteChangeLog.follow(db, table: SQLiteChangeLog.stateTable, keyColumns: ["adapter", "path"])
        return existed
    }

    func createTables(_ db: Database, _ mapping: Mapping) throws {
        for t in mapping.tables where try !db.tableExists(t.table) {
            let columns = t.columns.map { c -> String in
                let type: String =
                    switch c.kind {
                    case .scalar(let s), .array(let s), .link(_, let s): SQLiteValues.declaredType(s)
                    }
                var sql = "\(SQLiteSQL.quote(c.column)) \(type)"
                if !c.property.isOptional && !c.property.type.isList, case .scalar = c.kind { sql += " NOT NULL" }
                if case .link(let target, _) = c.kind, let tt = mapping.table(forType: target) {
                    sql += " REFERENCES \(SQLiteSQL.quote(tt.table)) (\(SQLiteSQL.quote(tt.referencedColumn)))"
                }
                return sql
            }
            let key = "PRIMARY KEY (\(t.keyColumns.map(SQLiteSQL.quote).joined(separator: ", ")))"
            try db.execute(
                sql: "CREATE TABLE \(SQLiteSQL.quote(t.table)) (\((columns + [key]).joined(separator: ", ")))")
        }
    }

    @discardableResult
    public func prepare(_ mapping: Mapping) async throws -> StreamStart {
        try check(mapping)
        guard let lock = FileLock(lockPath) else { throw SQLiteConnector.daemonRunning(options.file) }
        let existed = try await pool.write { db in try self.prepareDatabase(db, mapping) }
        state.withLock {
            $0.mapping = mapping
            $0.lock = lock
        }
        return existed ? .resumed : .created
    }

    // MARK: Realm → database

    public func appliedVersions(adapter: String) async throws -> [String: Int64] {
        try await pool.read { db in
            guard try db.tableExists(SQLiteChangeLog.stateTable) else { return [:] }
            let rows = try Row.fetchAll(
                db, sql: "SELECT path, version FROM \(SQLiteChangeLog.stateTable) WHERE adapter = ?",
                arguments: [adapter])
            return Dictionary(rows.map { ($0[0] as String, $0[1] as Int64) }, uniquingKeysWith: max)
        }
    }

    /// Runs `body` in one transaction tagged as the adapter's own, with the marker.
    func own(adapter: String, path: String, version: Int64, _ body: @escaping @Sendable (Database) throws -> Void)
        async throws
    {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO \(SQLiteChangeLog.originTable) (id, adapter) VALUES (1, ?)", arguments: [adapter])
            try body(db)
            try db.execute(
                sql: """
                    INSERT INTO \(SQLiteChangeLog.stateTable) (adapter, path, version) VALUES (?, ?, ?)
                    ON CONFLICT (adapter, path) DO UPDATE SET version = excluded.version
                    """, arguments: [adapter, path, version])
            try db.execute(sql: "DELETE FROM \(SQLiteChangeLog.originTable)")
        }
    }

    public func apply(_ writes: [DatabaseWrite], adapter: String, path: String, version: Int64) async throws {
        try await own(adapter: adapter, path: path, version: version) { db in
            for w in writes { try db.execute(w) }
        }
    }

    public func deadLetter(_ instructions: [Instruction], error: String, adapter: String, path: String, version: Int64)
        async throws
    {
        let json = JSONValue.array(instructions.map { $0.json() }).serialized()
        try await own(adapter: adapter, path: path, version: version) { db in
            try db.execute(
                sql: """
                    INSERT INTO \(SQLiteChangeLog.deadLetterTable) (adapter, path, version, instructions, error)
                    VALUES (?, ?, ?, ?, ?)
                    """, arguments: [adapter, path, version, json, error])
        }
    }

    // MARK: Database → Realm

    public func changes() async throws -> AsyncThrowingStream<DatabaseTransaction, Error> {
        guard let mapping = state.withLock({ $0.mapping }) else { throw SQLiteConnector.notPrepared() }
        // The last sequence number read, and when confirmed rows last left the log.
        let place = Mutex((last: Int64(0), forgot: ContinuousClock.now))
        return pollingStream(every: .milliseconds(options.pollIntervalMs)) {
            // Confirmed rows leave the log in one statement every half second, not one per poll.
            if ContinuousClock.now - place.withLock({ $0.forgot }) > .milliseconds(500) {
                try await self.forgetProcessed()
                place.withLock { $0.forgot = ContinuousClock.now }
            }
            let after = place.withLock { $0.last }
            let entries = try await self.pool.read { db in try SQLiteChangeLog.entries(db, after: after) }
            place.withLock { $0.last = entries.last?.seq ?? after }
            return SQLiteChangeLog.transactions(entries, mapping: mapping)
        }
    }

    public func processed(_ transaction: DatabaseTransaction) {
        state.withLock { $0.processed = max($0.processed, Int64(transaction.token)) }
    }

    /// Deletes the log rows the Realms hold.
    func forgetProcessed() async throws {
        let (processed, deleted) = state.withLock { ($0.processed, $0.deleted) }
        guard processed > deleted else { return }
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM \(SQLiteChangeLog.table) WHERE seq <= ?", arguments: [processed])
        }
        state.withLock { $0.deleted = max($0.deleted, processed) }
    }

    public func linkList(_ list: LinkListMapping, owner: Value) throws -> [Value] {
        throw Self.unsupported("sync lists of links")
    }

    public func row(_ table: String, key: DatabaseRow, columns: [String]) throws -> DatabaseRow? {
        let mapped = state.withLock { $0.mapping }?.table(named: table)
        let keys = key.values.sorted { $0.key < $1.key }
        let sql =
            "SELECT \(columns.map(SQLiteSQL.quote).joined(separator: ", ")) FROM \(SQLiteSQL.quote(table)) WHERE "
            + keys.map { "\(SQLiteSQL.quote($0.key)) = ?" }.joined(separator: " AND ")
        return try pool.read { db -> DatabaseRow? in
            guard
                let r = try Row.fetchOne(
                    db, sql: sql, arguments: StatementArguments(keys.map { SQLiteValues.bindable($0.value) }))
            else { return nil }
            return DatabaseRow(
                Dictionary(
                    uniqueKeysWithValues: columns.enumerated().map { i, c in
                        (c, SQLiteValues.value(r[i] as DatabaseValue, kind: mapped?.column(named: c)?.kind))
                    }))
        }
    }

    /// `change 42`: the change log's sequence number.
    public func describe(position: String) -> String {
        Int64(position).map { "change \($0)" } ?? position
    }

    public func isTransient(_ error: Error) -> Bool {
        guard let e = error as? DatabaseError else { return false }
        return e.resultCode == .SQLITE_BUSY || e.resultCode == .SQLITE_LOCKED
    }

    public func shutdown() async {
        try? await forgetProcessed()
        state.withLock { $0.lock = nil }
    }

    // MARK: Loading and status

    public func loadSnapshot(_ mapping: Mapping, partial: Bool) async throws -> LoadSnapshot {
        try check(mapping)
        guard FileLock(lockPath) != nil else { throw SQLiteConnector.daemonRunning(options.file) }
        let existed = try await pool.write { db in
            let existed = try self.prepareDatabase(db, mapping)
            // The stream starts over at the snapshot: what the log holds is in it.
            if !(partial && existed) { try db.execute(sql: "DELETE FROM \(SQLiteChangeLog.table)") }
            return existed
        }
        let snapshot = try pool.makeSnapshot()
        let last = try await snapshot.read { db in try SQLiteChangeLog.lastSequence(db) }
        let handOff = partial && existed ? nil : SQLiteChangeLog.position(last)
        return SQLiteLoadSnapshot(snapshot: snapshot, mapping: mapping, handOffPosition: handOff)
    }

    public func dryRunSnapshot(_ mapping: Mapping) async throws -> LoadSnapshot {
        try check(mapping)
        let snapshot = try pool.makeSnapshot()
        try await snapshot.read { db in
            for t in mapping.tables where try !db.tableExists(t.table) {
                throw Self.mismatch(
                    ["table \(t.table) does not exist"], heading: "The database does not match the mapping")
            }
        }
        return SQLiteLoadSnapshot(snapshot: snapshot, mapping: mapping, handOffPosition: nil)
    }

    public func statusReport(adapter: String) async throws -> DatabaseStatus {
        let applied = try await appliedVersions(adapter: adapter)
        let (waiting, deadLetters, latest) = try await pool.read { db -> (Int, Int, [DatabaseStatus.DeadLetter]) in
            guard try db.tableExists(SQLiteChangeLog.table) else { return (0, 0, []) }
            let latest = try Row.fetchAll(
                db,
                sql: """
                    SELECT path, version, failed_at || ' UTC', error, substr(instructions, 1, ?)
                    FROM \(SQLiteChangeLog.deadLetterTable) WHERE adapter = ? ORDER BY id DESC LIMIT ?
                    """, arguments: [DatabaseStatus.excerptLength, adapter, DatabaseStatus.listed]
            ).map { r in
                DatabaseStatus.DeadLetter(path: r[0], version: r[1], failedAt: r[2], error: r[3], instructions: r[4])
            }
            return (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLiteChangeLog.table)") ?? 0,
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM \(SQLiteChangeLog.deadLetterTable) WHERE adapter = ?",
                    arguments: [adapter]) ?? 0,
                latest
            )
        }
        let streaming = state.withLock { $0.lock != nil } || FileLock(lockPath) == nil
        return DatabaseStatus(
            applied: applied, deadLetters: deadLetters, deadRows: 0, streaming: streaming,
            streamName: "the change log of \(options.file)",
            stream: [
                "Change log of \(options.file): \(waiting) row change(s) not yet confirmed in the Realms, "
                    + (streaming ? "a daemon follows it" : "no daemon running")
            ],
            warnings: [], latestDeadLetters: latest)
    }
}

/// An exclusive lock on a file (flock), held while the value lives.
final class FileLock: Sendable {
    let descriptor: Int32

    init?(_ path: String) {
        let fd = open(path, O_CREAT | O_RDWR, 0o644)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
