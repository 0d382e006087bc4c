import Foundation
import RealmAdapter

/// One consistent read of the database for the loader: a SNAPSHOT transaction held open on a
/// connection of its own, with the change-tracking version read in it, so that `run` starts
/// exactly where the load ended. Rows stream through (`dbnextrow`), never held whole.
final class SQLServerLoadSnapshot: LoadSnapshot, @unchecked Sendable {
    // @unchecked: the loader calls it from one thread at a time; the connection serializes calls.
    let connection: SQLServerConnection
    let dialect: SQLServerDialect
    let columnTypes: [String: [String: String]]
    let handOffPosition: String?
    let realmIdWriter: ([RealmIdAssignment]) throws -> Void

    init(
        connection: SQLServerConnection, dialect: SQLServerDialect, columnTypes: [String: [String: String]],
        handOffPosition: String?, realmIdWriter: @escaping ([RealmIdAssignment]) throws -> Void
    ) {
        self.connection = connection
        self.dialect = dialect
        self.columnTypes = columnTypes
        self.handOffPosition = handOffPosition
        self.realmIdWriter = realmIdWriter
    }

    /// Opens the snapshot; returns it and the version it reads at.
    ///
    /// `dryRun`: only estimates are read, so no SNAPSHOT transaction and no version (0): a dry run
    /// works on a database not set up yet (no snapshot isolation, no change tracking, none of
    /// the connector's tables).
    ///
    /// `triggers`: the version is the trigger log's number, read while a second connection holds
    /// the gate (``SQLServerTriggerReader/snapshotStart(_:gate:_:)``).
    static func open(
        _ settings: SQLServerSettings, dialect: SQLServerDialect, columnTypes: [String: [String: String]],
        handOff: Bool, dryRun: Bool = false, triggers: Bool = false,
        realmIdWriter: @escaping ([RealmIdAssignment]) throws -> Void
    ) throws -> (SQLServerLoadSnapshot, Int64) {
        let c = try SQLServerConnection.connectSync(settings)
        let version = try c.sessionSync { s -> Int64 in
            guard !dryRun else {
                try s.execute("SET NOCOUNT ON;")
                return 0
            }
            guard triggers else {
                try s.execute("SET NOCOUNT ON; SET TRANSACTION ISOLATION LEVEL SNAPSHOT; BEGIN TRANSACTION;")
                return try SQLServerChangeReader.version(s, dialect)
            }
            try s.execute("SET NOCOUNT ON;")
            let gate = try SQLServerConnection.connectSync(settings)
            defer { gate.close() }
            return try gate.sessionSync { g in
                try g.execute(SQLServerConnector.sessionSettings)
                return try SQLServerTriggerReader.snapshotStart(s, gate: g, dialect)
            }
        }
        let position = handOff ? ChangeTrackingPoller.position(version, own: false) : nil
        return (
            SQLServerLoadSnapshot(
                connection: c, dialect: dialect, columnTypes: columnTypes, handOffPosition: position,
                realmIdWriter: realmIdWriter), version
        )
    }

    /// `sys.dm_db_partition_stats`' count (`sys.partitions`' without VIEW DATABASE STATE): for
    /// progress only, never to decide what to read.
    func estimatedRows(_ table: String) throws -> Int? {
        let name = dialect.table(table)
        let sql = dialect.statement(
            """
            SELECT SUM(p.rows) FROM sys.partitions AS p \
            WHERE p.object_id = OBJECT_ID(\(name)) AND p.index_id IN (0, 1)
            """)
        return try connection.sessionSync { s in
            // Babelfish answers -1 for a table never analyzed.
            if case .int(let n)? = try s.query(sql).rows.first?.first, n >= 0 { return Int(n) }
            return nil
        }
    }

    func sizeEstimate(_ table: String) throws -> Int? { try estimatedRows(table) }

    func distinctCount(_ table: String, columns: [String]) throws -> Int {
        let sql = dialect.statement(
            "SELECT COUNT_BIG(*) FROM (SELECT DISTINCT \(ids: columns) FROM \(table: table)) AS d")
        return try connection.sessionSync { s in
            if case .int(let n)? = try s.query(sql).rows.first?.first { return Int(n) }
            return 0
        }
    }

    func rows(_ table: String, columns: [String], orderedBy: [String], _ body: ([Value]) throws -> Void) throws {
        let selected = columns.map {
            SQLServerType.selectExpression(dialect.quote($0), type: SQLServerSchema.type(columnTypes, table, $0))
        }
        var text = "SELECT \(selected.joined(separator: ", ")) FROM \(dialect.table(table))"
        if !orderedBy.isEmpty { text += " ORDER BY " + orderedBy.map(dialect.quote).joined(separator: ", ") }
        try connection.sessionSync { s in try s.query(SQLStatement(text)) { _, row in try body(row) } }
    }

    func rows(_ table: String, columns: [String], orderedBy: [String], into receiver: FieldReceiver) throws {
        try rows(table, columns: columns, orderedBy: orderedBy) { values in
            for (i, v) in values.enumerated() { try receiver.value(v, at: i) }
            try receiver.endRow()
        }
    }

    func linkRows(
        _ list: LinkListMapping, owner: TableMapping, ownerColumns: [String], _ body: ([Value]) throws -> Void
    ) throws {
        let d = dialect
        let (o, t, i) = (
            d.quote(LinkListMapping.ownerColumn), d.quote(LinkListMapping.targetColumn),
            d.quote(LinkListMapping.indexColumn)
        )
        // A join object's list names it by its string key: the parts joined by the separator.
        let ownerKey =
            owner.compoundKey.map { parts in
                "CONCAT_WS(N'\(TableMapping.compoundKeySeparator)', "
                    + parts.map { "o." + d.quote($0.dbColumn) }.joined(separator: ", ") + ")"
            } ?? "o." + d.quote(owner.referencedColumn)
        let joined = ownerColumns.isEmpty ? "" : " LEFT JOIN \(d.table(owner.table)) AS o ON \(ownerKey) = l.\(o)"
        let select =
            ["l.\(o)", "l.\(t)"]
            + ownerColumns.map {
                SQLServerType.selectExpression(
                    "o." + d.quote($0), type: SQLServerSchema.type(columnTypes, owner.table, $0))
            }
        let text =
            "SELECT \(select.joined(separator: ", ")) FROM \(d.table(list.table)) AS l\(joined) ORDER BY l.\(o), l.\(i)"
        try connection.sessionSync { s in try s.query(SQLStatement(text)) { _, row in try body(row) } }
    }

    /// Writes RealmIds for rows without one through the connector (its own connection: this one
    /// is inside the snapshot's read-only view).
    func writeRealmIds(_ assignments: [RealmIdAssignment]) throws { try realmIdWriter(assignments) }

    func finish() throws {
        try connection.sessionSync { s in try s.execute("IF @@TRANCOUNT > 0 COMMIT TRANSACTION;") }
        connection.close()
    }
}
