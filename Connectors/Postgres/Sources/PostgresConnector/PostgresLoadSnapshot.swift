import Foundation
import Logging
import RealmAdapter

/// A consistent read of the database for `realm-adapter load`.
///
/// The hand-off: the replication slot is created with `EXPORT_SNAPSHOT`, which returns the
/// slot's consistent point and a snapshot that sees exactly the transactions committed before
/// it. A second connection reads every table under that snapshot (`SET TRANSACTION SNAPSHOT`),
/// so the loaded rows and the slot's stream meet with nothing lost and nothing twice. The
/// replication connection must stay open and idle until the reads are done (an exported
/// snapshot lives as long as it); an interrupted load is simply run again.
public final class PostgresLoadSnapshot: LoadSnapshot, @unchecked Sendable {
    // @unchecked: the connections serialize their own use; the rest is immutable.
    public let handOffPosition: String?
    let reader: PostgresConnection
    /// Holds the exported snapshot open (nil for a dry run).
    let replication: PostgresConnection?
    let schema: String
    var dialect: PostgresDialect { PostgresDialect(schema: schema) }
    let columnTypes: [String: [String: PostgresType?]]
    /// Writes RealmIds back on a connection of their own (the connector's).
    let realmIdWriter: ([RealmIdAssignment]) throws -> Void

    init(
        handOffPosition: String?, reader: PostgresConnection, replication: PostgresConnection?, schema: String,
        columnTypes: [String: [String: PostgresType?]], realmIdWriter: @escaping ([RealmIdAssignment]) throws -> Void
    ) {
        self.handOffPosition = handOffPosition
        self.reader = reader
        self.replication = replication
        self.schema = schema
        self.columnTypes = columnTypes
        self.realmIdWriter = realmIdWriter
    }

    public func writeRealmIds(_ assignments: [RealmIdAssignment]) throws {
        try realmIdWriter(assignments)
    }

    public func estimatedRows(_ table: String) throws -> Int? {
        let sql = dialect.statement(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = \(dialect.table(table))::regclass")
        let rows = try reader.sessionSync { s in try s.query(sql).rows }
        // -1: never vacuumed or analyzed, so unknown.
        guard let n = rows.first?[0].flatMap(Int.init), n >= 0 else { return nil }
        return n
    }

    /// The planner's row estimate (`EXPLAIN`): for a table never analyzed, a guess from its
    /// size on disk.
    public func sizeEstimate(_ table: String) throws -> Int? {
        let sql = dialect.statement("EXPLAIN (FORMAT JSON) SELECT * FROM \(table: table)")
        let plan = try reader.sessionSync { s in try s.query(sql).rows.first?[0] }
        guard let plan, case .array(let plans) = try JSONValue(parsing: plan),
            case .int(let rows)? = plans.first?["Plan"]?["Plan Rows"]
        else { return nil }
        return Int(rows)
    }

    public func distinctCount(_ table: String, columns: [String]) throws -> Int {
        let sql = dialect.statement("SELECT count(*) FROM (SELECT DISTINCT \(ids: columns) FROM \(table: table)) d")
        return try reader.sessionSync { s in Int(try s.query(sql).rows[0][0] ?? "0") ?? 0 }
    }

    public func rows(_ table: String, columns: [String], orderedBy: [String], _ body: ([Value]) throws -> Void) throws {
        let types = try columns.map { try type(table, $0) }
        try copy(
            columns.map(dialect.quote), from: try ordered(table, orderedBy), table: table, columns: columns,
            types: types, body)
    }

    /// The table's own rows (`ONLY`: not its inheritance children's, which the stream does not
    /// carry either; a partitioned table's are in its partitions), with `ORDER BY` the columns if
    /// there are any.
    private func ordered(_ table: String, _ columns: [String]) throws -> String {
        let partitioned = try reader.sessionSync { s in try PostgresSchema.partitionedTables(schema: schema, s) }
        return (partitioned.contains(table) ? "" : "ONLY ") + dialect.table(table)
            + (columns.isEmpty ? "" : " ORDER BY " + columns.map(dialect.quote).joined(separator: ", "))
    }

    public func rows(_ table: String, columns: [String], orderedBy: [String], into receiver: FieldReceiver) throws {
        let types = try columns.map { try type(table, $0) }
        let fields = types.map { BinaryField(oid: $0.oid) }
        try fields.withUnsafeBufferPointer { fields in
            try copy(
                columns.map(dialect.quote), from: try ordered(table, orderedBy), table: table, columns: columns,
                types: types,
                field: { i, bytes, binary in
                    guard let bytes else { return try receiver.value(.null, at: i) }
                    if binary {
                        try fields[i].write(bytes, to: receiver, at: i)
                    } else {
                        try receiver.value(try types[i].decode(String(decoding: bytes, as: UTF8.self)), at: i)
                    }
                }, endRow: receiver.endRow)
        }
    }

    public func linkRows(
        _ list: LinkListMapping, owner: TableMapping, ownerColumns: [String], _ body: ([Value]) throws -> Void
    ) throws {
        let (o, t, i) = (LinkListMapping.ownerColumn, LinkListMapping.targetColumn, LinkListMapping.indexColumn)
        let types = try [type(list.table, o), type(list.table, t)] + ownerColumns.map { try type(owner.table, $0) }
        // A join object's list names it by its string key: the parts joined by the separator.
        let ownerKey =
            owner.compoundKey.map {
                "concat_ws(\(PostgresSQL.literal(TableMapping.compoundKeySeparator)), "
                    + $0.map { "o." + dialect.quote($0.dbColumn) }.joined(separator: ", ") + ")"
            }
            ?? "o." + dialect.quote(owner.referencedColumn)
        let joined =
            ownerColumns.isEmpty
            ? ""
            : " LEFT JOIN \(dialect.table(owner.table)) o ON \(ownerKey) = l.\(dialect.quote(o))"
        let select =
            ["l." + dialect.quote(o), "l." + dialect.quote(t)]
            + ownerColumns.map { "o." + dialect.quote($0) }
        try copy(
            select,
            from:
                "\(dialect.table(list.table)) l\(joined) ORDER BY l.\(dialect.quote(o)), l.\(dialect.quote(i))",
            table: list.table, columns: [o, t] + ownerColumns, types: types, body)
    }

    /// The type of a column of the snapshot's tables.
    private func type(_ table: String, _ column: String) throws -> PostgresType {
        guard let known = columnTypes[table] else {
            throw PostgresError.tableMissing(schema, table)
        }
        guard let found = known[column] else {
            throw PostgresError.columnMissing(table, column)
        }
        guard let type = found else {
            throw PostgresError.unknownColumnType(table, column)
        }
        return type
    }

    /// `COPY (SELECT select FROM from) TO STDOUT` in binary, each row decoded into `types` and
    /// handed to `body`; columns of types without a binary form travel as text.
    private func copy(
        _ select: [String], from: String, table: String, columns: [String], types: [PostgresType],
        _ body: ([Value]) throws -> Void
    ) throws {
        var values = [Value](repeating: .null, count: columns.count)
        try copy(
            select, from: from, table: table, columns: columns, types: types,
            field: { i, bytes, binary in
                guard let bytes else {
                    values[i] = .null
                    return
                }
                values[i] =
                    binary
                    ? try types[i].decode(binary: bytes) : try types[i].decode(String(decoding: bytes, as: UTF8.self))
            }, endRow: { try body(values) })
    }

    /// The same field by field: `field(i, bytes, binary)` for each (nil bytes for NULL, valid
    /// during the call; `binary`: in the type's binary form, else text), `endRow()` after each row.
    private func copy(
        _ select: [String], from: String, table: String, columns: [String], types: [PostgresType],
        field: (Int, UnsafeBufferPointer<UInt8>?, Bool) throws -> Void, endRow: () throws -> Void
    ) throws {
        let binary = types.map(\.hasBinaryForm)
        let width = types.count
        let list = zip(select, binary).map { $1 ? $0 : "(\($0))::text" }.joined(separator: ", ")
        // The flags through a pointer: no reference counting per field.
        try binary.withUnsafeBufferPointer { binary in
            try reader.sessionSync { s in
                var first = true
                try s.copyOut("COPY (SELECT \(list) FROM \(from)) TO STDOUT (FORMAT binary)") { message in
                    var count = 0
                    let isRow = try PostgresCopyBinary.fields(message, first: first) { i, bytes in
                        guard i < width else { return }
                        count = i + 1
                        do {
                            try field(i, bytes, binary[i])
                        } catch let e as RealmAdapterError where e.context["db.table"] == nil {
                            throw e.inColumn(table: table, column: columns[i])
                        }
                    }
                    first = false
                    guard isRow else { return }
                    guard count == width else {
                        throw PostgresError.copyMalformed("\(count) columns for \(table), expected \(width)")
                    }
                    try endRow()
                }
            }
        }
    }

    public func finish() throws {
        defer {
            reader.close()
            replication?.close()
        }
        if reader.isAlive { try reader.sessionSync { s in try s.execute("COMMIT") } }
    }
}

extension PostgresConnector: LoadableConnector {
    /// Prepares the database as the daemon does (without creating the slot), and opens the
    /// snapshot a load reads.
    ///
    /// - A full load (`partial: false`), or any load when the slot does not exist: the slot is
    ///   (re)created with `EXPORT_SNAPSHOT`; its consistent point is the hand-off position.
    /// - A partial load (`--tables`) while the slot exists: the slot keeps its place, and a
    ///   temporary slot exports the snapshot; no hand-off position (the daemon replays changes
    ///   since its own position over the loaded rows).
    ///
    /// - Throws: `replicationSlot` if the slot is in use (a daemon is running).
    public func loadSnapshot(_ mapping: Mapping, partial: Bool) async throws -> LoadSnapshot {
        try await prepareDatabase(mapping)
        let c = options
        let schema = self.schema
        let customTypes = self.customTypes
        let admin = try await PostgresConnection.connect(settings, logger: logger)
        defer { admin.close() }
        let status = try await admin.session { s in
            _ = try PostgresReplicationSetup.slotExists(s, c.slotName)  // a slot of another database is an error
            return try PostgresReplicationSetup.slotStatus(s, c.slotName)
        }
        if status?.active == true {
            throw PostgresError.slotInUseByDaemon(c.slotName)
        }
        let keepSlot = partial && status != nil
        if status != nil && !keepSlot {
            logger.info(
                "Recreating the replication slot: the load becomes the daemon's starting point",
                metadata: ["pg.slot": "\(c.slotName)"])
            try await admin.session { s in try PostgresReplicationSetup.dropSlot(s, c.slotName) }
        }
        let replication = try await PostgresConnection.connect(settings, replication: true, logger: logger)
        do {
            let slot = keepSlot ? "\(c.slotName)_load_\(getpid())" : c.slotName
            let (lsn, snapshot) = try await replication.session { s in
                try PostgresReplicationSetup.createSlot(s, slot, exportSnapshot: true, temporary: keepSlot)
            }
            guard let snapshot else {
                throw PostgresError.slotCreation(lacks: "exported snapshot")
            }
            logger.info(
                keepSlot
                    ? "Reading a snapshot; the replication slot keeps its place"
                    : "Created the replication slot; loading its snapshot",
                metadata: ["pg.slot": "\(slot)", "pg.lsn": "\(lsn)"])
            try Failpoint.loadAfterSnapshotPoint.hit()
            let reader = try await PostgresConnection.connect(settings, logger: logger)
            let columns = try await reader.session { s in
                try s.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                try s.query(PostgresDialect(schema: schema).statement("SET TRANSACTION SNAPSHOT \(literal: snapshot)"))
                return try PostgresSchema.columnTypes(schema: schema, customTypes: customTypes, s)
            }
            return PostgresLoadSnapshot(
                handOffPosition: keepSlot ? nil : Self.position(lsn), reader: reader, replication: replication,
                schema: schema, columnTypes: columns, realmIdWriter: { [self] in try self.writeRealmIds($0) })
        } catch {
            replication.close()
            throw error
        }
    }

    /// A read for `load --dry-run`: no slot, no writes; checks that the database matches the mapping.
    public func dryRunSnapshot(_ mapping: Mapping) async throws -> LoadSnapshot {
        let reader = try await PostgresConnection.connect(settings, logger: logger)
        let schema = self.schema
        let customTypes = self.customTypes
        let columns = try await reader.session { s in
            let problems = try PostgresSchema.mismatches(mapping, schema: schema, customTypes: customTypes, s)
            guard problems.isEmpty else {
                throw PostgresError.mismatch(problems)
            }
            try s.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try PostgresSchema.columnTypes(schema: schema, customTypes: customTypes, s)
        }
        return PostgresLoadSnapshot(
            handOffPosition: nil, reader: reader, replication: nil, schema: schema, columnTypes: columns
        ) { _ in
            throw PostgresError.dryRunWritesNothing()
        }
    }
}
