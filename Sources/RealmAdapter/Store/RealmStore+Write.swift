import Foundation

/// A connector's resume point, recorded atomically with a Realm transaction (ARCHITECTURE.md:
/// Exactly once, and no echoes): for Postgres the commit LSN, for SQL Server the change-tracking
/// version. A source's positions are one ordered stream, recorded in commit order and sorting as
/// strings in that order; the store keeps the latest per `source`, once for all its Realms (see
/// ``RealmStore/sourcePosition(_:of:origin:)``). The connector decides what it means.
public struct SourcePosition: Hashable, Sendable {
    public var source: String
    public var position: String
    public init(source: String, position: String) {
        self.source = source
        self.position = position
    }
}

/// The instructions of one Realm in a multi-Realm write.
public struct RealmChanges: Sendable, Hashable {
    public var path: String
    public var instructions: [Instruction]
    public init(path: String, instructions: [Instruction]) {
        self.path = path
        self.instructions = instructions
    }
}

extension RealmStore {
    /// Applies `instructions` to the Realm at `path` as one transaction, creating the Realm if needed.
    ///
    /// The transaction is all-or-nothing: the first instruction that breaks the schema (unknown
    /// type or property, wrong value type, null in a required property, duplicate primary key,
    /// missing object, list index out of range, destructive schema change) rejects all of it with
    /// an error naming the instruction's index and the reason.
    ///
    /// - Parameters:
    ///   - origin: who wrote it; adapters skip transactions of their own origin.
    ///   - sourcePosition: recorded in the same SQLite transaction, for exactly-once delivery.
    /// - Returns: the new version, or the current one if `instructions` is empty.
    @discardableResult
    public func apply(
        _ instructions: [Instruction], to path: String, origin: String,
        sourcePosition: SourcePosition? = nil
    ) throws -> Int64 {
        try apply(
            [RealmChanges(path: path, instructions: instructions)], origin: origin, sourcePosition: sourcePosition)[0]
    }

    /// Applies changes to several Realms in one atomic transaction (all or none), recording
    /// `sourcePosition` with each of them. Returns each Realm's new version, in order.
    @discardableResult
    public func apply(_ changes: [RealmChanges], origin: String, sourcePosition: SourcePosition? = nil) throws
        -> [Int64]
    {
        try commit(changes.map(\.path), origin: origin, sourcePosition: sourcePosition) { i, w in
            Recorded(instructions: try Self.apply(changes[i].instructions, with: &w, path: changes[i].path))
        }
    }

    /// Runs `body` once per path, each as a write transaction on that Realm, and commits them all
    /// in one atomic store transaction (all Realms or none). Realms are created if missing.
    @discardableResult
    public func write(
        toEach paths: [String], origin: String, sourcePosition: SourcePosition? = nil,
        _ body: (String, inout WriteTransaction) throws -> Void
    ) throws -> [Int64] {
        try commit(paths, origin: origin, sourcePosition: sourcePosition) { i, w in
            var tx = WriteTransaction(writer: w, path: paths[i])
            defer { w = tx.writer }
            try body(paths[i], &tx)
            return Recorded(instructions: tx.instructions, prepared: tx.prepared)
        }
    }

    /// ``write(toEach:origin:sourcePosition:_:)`` for a load: each adapter cursor of `cursors`
    /// (adapter ids) that stands at a Realm's version when the write begins moves past the write,
    /// in the same transaction (a load's own transactions, which the database holds already: its
    /// hand-off then has nothing left to do for the Realms it created).
    func write(
        toEach paths: [String], origin: String, passing cursors: [Int64],
        _ body: (String, inout WriteTransaction) throws -> Void
    ) throws -> [Int64] {
        try commit(paths, origin: origin, sourcePosition: nil, passing: cursors) { i, w in
            var tx = WriteTransaction(writer: w, path: paths[i])
            defer { w = tx.writer }
            try body(paths[i], &tx)
            return Recorded(instructions: tx.instructions, prepared: tx.prepared)
        }
    }

    /// `apply(_:to:origin:sourcePosition:)` without blocking the caller's thread.
    @discardableResult
    public func apply(
        _ instructions: [Instruction], to path: String, origin: String,
        sourcePosition: SourcePosition? = nil
    ) async throws -> Int64 {
        try await perform { try self.apply(instructions, to: path, origin: origin, sourcePosition: sourcePosition) }
    }

    /// Runs blocking store work (any of the synchronous methods) on a thread outside Swift's
    /// cooperative pool, and waits for it without blocking the caller's thread.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, Error>) in
            DispatchQueue.global().async { c.resume(with: Result(catching: body)) }
        }
    }

    /// Runs `body` as one write transaction on the Realm at `path` (created if missing), recording
    /// the instructions its calls make. If `body` throws, nothing is written.
    ///
    /// - Returns: `body`'s result and the new version (unchanged if `body` changed nothing).
    @discardableResult
    public func write<T>(
        to path: String, origin: String = "local", sourcePosition: SourcePosition? = nil,
        _ body: (inout WriteTransaction) throws -> T
    ) throws -> (result: T, version: Int64) {
        var result: T?
        let versions = try commit([path], origin: origin, sourcePosition: sourcePosition) { _, w in
            var tx = WriteTransaction(writer: w, path: path)
            defer { w = tx.writer }
            result = try body(&tx)
            return Recorded(instructions: tx.instructions, prepared: tx.prepared)
        }
        return (result!, versions[0])
    }

    /// Applies instructions in order and returns them typed, as history records them. A refusal
    /// names the instruction's index in its transaction, where `instructions` start at `firstIndex`.
    static func apply(_ instructions: [Instruction], with w: inout RealmWriter, path: String, firstIndex: Int = 0)
        throws -> [Instruction]
    {
        var typed: [Instruction] = []
        typed.reserveCapacity(instructions.count)
        // Every instruction before `typed.count` is applied: that is where a failure is.
        do {
            while typed.count < instructions.count {
                let i = typed.count
                guard try w.applyInserts(instructions[i...], into: &typed) == 0 else { continue }
                typed.append(try w.apply(instructions[i]))
            }
        } catch let e as RealmAdapterError {
            throw Self.rejected(e, index: firstIndex + typed.count, instruction: instructions[typed.count], path: path)
        } catch let e as StoreError {
            throw Self.rejected(
                Self.wrap(e), index: firstIndex + typed.count, instruction: instructions[typed.count], path: path)
        }
        return typed
    }

    static func rejected(_ e: RealmAdapterError, index: Int, instruction: Instruction, path: String)
        -> RealmAdapterError
    {
        RealmAdapterError.rejected(e, path: path, index: index, instruction: instruction)
    }

    /// The one write path: `body(i, writer)` fills the Realm at `paths[i]` through its writer
    /// and returns the instructions to record. Creates Realms, bumps versions, records history,
    /// schema and the source position, all in one SQLite transaction; then wakes the notifier.
    func commit(
        _ paths: [String], origin: String, sourcePosition: SourcePosition?, passing cursors: [Int64] = [],
        _ body: (Int, inout RealmWriter) throws -> Recorded
    ) throws -> [Int64] {
        for p in paths { try RealmPath.validate(p) }
        var newSchemas: [(Int64, Schema)] = []
        let versions: [Int64]
        do {
            versions = try backend.write(.asOpened) { db in
                newSchemas = []
                var versions: [Int64] = []
                let recording = try changeRecordingFilters(db)
                // A new Realm's row is written once, after its transaction, with its version and schema;
                // its id is the one SQLite would give it (the highest so far plus one), taken ahead.
                var newId: Int64?
                // Distinct Realms are looked up many at a time, and their rows and first cursors
                // written together at the end (RealmStore+ManyRealms); a path named twice sees its
                // first part's writes, one Realm at a time.
                let together = paths.count > 1 && Set(paths).count == paths.count && Set(cursors).count == cursors.count
                let existing = together ? try Self.realmRows(db, paths) : [:]
                var created = NewRealms()
                for (i, path) in paths.enumerated() {
                    let found = together ? existing[path] : try Self.realmRow(db, path)
                    let r =
                        try found
                        ?? RealmRow(
                            id: Self.nextRealmId(db, after: &newId), path: path, schemaId: 0, version: 0,
                            compactedThrough: 0)
                    var writer = RealmWriter(
                        db: db, tables: RealmTables(realmId: r.id, layout: layout), schema: try schema(db, r),
                        baseVersion: r.version)
                    if !recording.isEmpty, recording.contains(where: { $0.matches(path) }) {
                        writer.recording = ChangeRecorder(version: r.version + 1)
                    }
                    let recorded = try body(i, &writer)
                    // Types may refer to each other in any order within a transaction: check the whole at
                    // the end, unless it is a schema stored before (and checked then), as per-user Realms' are.
                    let recentId = writer.schemaChanged ? recentSchemaId(writer.schema) : nil
                    if writer.schemaChanged, recentId == nil, !knowsSchema(writer.schema.serializedJSON) {
                        do { try writer.schema.validate() } catch let e as RealmAdapterError {
                            throw RealmAdapterError.rejected(e, path: path)
                        }
                    }
                    var version = r.version
                    var schemaId = r.schemaId
                    if recorded.count > 0 {
                        version += 1
                        try Self.insertHistory(
                            db, realm: r.id, version: version, origin: origin, recorded, sourcePosition)
                        if writer.schemaChanged {
                            // A schema committed lately is known by id; another is found or stored by its text.
                            schemaId = try recentId ?? self.schemaId(db, json: writer.schema.serializedJSON)
                            if recentId == nil { newSchemas.append((schemaId, writer.schema)) }
                        }
                    }
                    if found == nil, together {
                        created.realms.append((r.id, path, schemaId, version, Timestamp(Date()).totalNanoseconds ?? 0))
                    } else if found == nil {
                        try db.cachedStatement(
                            sql: "INSERT INTO realm (id, path, schema_id, version, created_at) "
                                + "VALUES (?, ?, ?, ?, ?)"
                        ).executeDeferred(arguments: [
                            r.id, path, schemaId, version, Timestamp(Date()).totalNanoseconds ?? 0,
                        ])
                    } else if version > r.version {
                        try db.cachedStatement(
                            sql: schemaId == r.schemaId
                                ? "UPDATE realm SET version = ?1 WHERE id = ?3"
                                : "UPDATE realm SET version = ?1, schema_id = ?2 WHERE id = ?3"
                        ).executeDeferred(arguments: [version, schemaId, r.id])
                    }
                    if version > r.version, found == nil, together {
                        created.cursors += cursors.map { ($0, r.id, version) }
                    } else if version > r.version {
                        for c in cursors { try Self.moveCursor(db, c, realm: r.id, from: r.version, to: version) }
                    }
                    versions.append(version)
                }
                try created.write(db)
                // Once for the store: each of the Realms holds the source's transactions up to it.
                if let sourcePosition, !paths.isEmpty { try Self.recordFloor(db, sourcePosition, origin: origin) }
                return versions
            }
        } catch {
            // What the failed transaction registered was rolled back with it.
            layout.forget()
            forgetStoredIds()
            if let e = error as? StoreError { throw Self.wrap(e) }
            throw error
        }
        for (id, s) in newSchemas {
            cache(s, id: id)
            rememberRecent(s, id: id)
        }
        notifier.poke()
        return versions
    }

    /// What one Realm's part of a write records in history.
    struct Recorded {
        var instructions: [Instruction]
        var prepared: [(at: Int, encoded: BinaryWriter, count: Int)] = []
        var count: Int { prepared.reduce(instructions.count) { $0 + $1.count } }
    }

    /// Records one Realm's transaction in history, its instructions bound in place: a load of
    /// per-user Realms records one for each of them.
    static func insertHistory(
        _ db: any StoreConnection, realm: Int64, version: Int64, origin: String, _ recorded: Recorded,
        _ position: SourcePosition?
    ) throws {
        let stmt = try db.cachedStatement(
            sql: """
                INSERT INTO history (realm_id, version, origin, committed_at, instruction_count, instructions,
                                     source, position)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        stmt.reset()
        defer { stmt.clearBindings() }
        stmt.bind(realm, at: 1)
        stmt.bind(version, at: 2)
        try stmt.bind(.string(origin), at: 3)
        stmt.bind(Timestamp(Date()).totalNanoseconds ?? 0, at: 4)
        stmt.bind(Int64(recorded.count), at: 5)
        try stmt.bind(position.map { .string($0.source) } ?? .null, at: 7)
        try stmt.bind(position.map { .string($0.position) } ?? .null, at: 8)
        // Bound in place: the bytes outlive the statement's run, which is inside (a backend
        // that holds the statement back copies them).
        try InstructionCodec.encode(recorded.instructions, prepared: recorded.prepared).withUnsafeBytes { bytes in
            try stmt.bind(borrowing: bytes, at: 6)
            try stmt.runDeferred()
        }
    }

    /// Moves the cursor of adapter `adapterId` on a Realm to `version` where it stands at `from`
    /// (no cursor stands at 0). A load of per-user Realms moves two for each of them.
    static func moveCursor(_ db: any StoreConnection, _ adapterId: Int64, realm: Int64, from: Int64, to version: Int64)
        throws
    {
        let sql =
            from == 0
            ? """
            INSERT INTO adapter_cursor (adapter_id, realm_id, version) VALUES (?1, ?2, ?4)
            ON CONFLICT (adapter_id, realm_id) DO UPDATE SET version = excluded.version WHERE adapter_cursor.version = ?3
            """
            : "UPDATE adapter_cursor SET version = ?4 WHERE adapter_id = ?1 AND realm_id = ?2 AND version = ?3"
        try db.cachedStatement(sql: sql).executeDeferred(arguments: [adapterId, realm, from, version])
    }

    /// The id SQLite would give the next Realm created in this transaction: the highest so far
    /// plus one (`last`, the one given before, once the transaction has made one).
    static func nextRealmId(_ db: any StoreConnection, after last: inout Int64?) throws -> Int64 {
        let id =
            try last.map { $0 + 1 }
            ?? (db.cachedStatement(sql: "SELECT max(id) FROM realm").firstInteger([]) ?? 0) + 1
        last = id
        return id
    }
}
