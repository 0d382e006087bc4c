import Foundation
import RealmAdapter

/// The publication and the replication slot the daemon streams from.
public enum PostgresReplicationSetup {
    /// Creates the publication for `tables` (in `schema`) if missing, or sets its table list.
    /// `FOR TABLE` needs only ownership of the tables; `FOR ALL TABLES` would need a superuser.
    /// Changes to a partitioned table are published under its own name, not its partitions'
    /// (`publish_via_partition_root`, Postgres 13 and later).
    ///
    /// A table is published `ONLY`, without its inheritance children (their rows are not the
    /// type's, and published they would need a replica identity for their own updates); a
    /// partitioned table with its partitions.
    public static func ensurePublication(_ s: PostgresSession, name: String, schema: String, tables: [String]) throws {
        let d = PostgresDialect(schema: schema)
        let partitioned = try PostgresSchema.partitionedTables(schema: schema, s)
        let list = tables.map { (partitioned.contains($0) ? "" : "ONLY ") + d.table($0) }.joined(separator: ", ")
        let exists = try s.query(d.statement("SELECT 1 FROM pg_publication WHERE pubname = \(name)")).rows.count == 1
        let viaRoot = s.serverVersion >= 130000
        if exists {
            try s.query(d.statement("ALTER PUBLICATION \(id: name) SET TABLE \(raw: list)"))
            if viaRoot {
                try s.query(d.statement("ALTER PUBLICATION \(id: name) SET (publish_via_partition_root = true)"))
            }
        } else {
            let options = viaRoot ? " WITH (publish_via_partition_root = true)" : ""
            try s.query(d.statement("CREATE PUBLICATION \(id: name) FOR TABLE \(raw: list)\(raw: options)"))
        }
    }

    /// Gives `table` a replica identity if it has none (no primary key, or `NOTHING`): published
    /// without one, the application's own `UPDATE` and `DELETE` of it would fail. The identity is
    /// a unique index Postgres accepts for it (immediate, not partial, on `NOT NULL` columns,
    /// fewest columns first), or else the whole row (`FULL`).
    /// - Returns: what it set (`USING INDEX name` or `FULL`), or nil when the table had one.
    @discardableResult
    public static func ensureReplicaIdentity(_ s: PostgresSession, schema: String, table: String) throws -> String? {
        let d = PostgresDialect(schema: schema)
        let row = try s.query(
            d.statement(
                """
                SELECT c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS (
                           SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)),
                       (SELECT x.relname FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
                        WHERE i.indrelid = c.oid AND i.indisunique AND i.indimmediate AND i.indpred IS NULL
                          AND i.indexprs IS NULL AND NOT EXISTS (
                              SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
                              AND a.attnum = ANY (i.indkey) AND NOT a.attnotnull)
                        ORDER BY i.indnatts, x.relname LIMIT 1)
                FROM pg_class c WHERE c.oid = \(d.table(table))::regclass AND c.relkind = 'r'
                """)
        ).rows.first
        guard let row, row[0] == "t" else { return nil }
        let identity = row[1].map { "USING INDEX " + d.quote($0) } ?? "FULL"
        try s.query(d.statement("ALTER TABLE \(table: table) REPLICA IDENTITY \(raw: identity)"))
        return identity
    }

    /// Whether the slot exists in this database.
    /// - Throws: `replicationSlot` if a slot of that name belongs to another database (slot
    ///   names are shared by the whole server).
    public static func slotExists(_ s: PostgresSession, _ slot: String) throws -> Bool {
        let rows = try s.query(
            "SELECT database, database = current_database() FROM pg_replication_slots WHERE slot_name = $1", [slot]
        ).rows
        guard let row = rows.first else { return false }
        guard row[1] == "t" else {
            throw PostgresError.slotOfOtherDatabase(slot, database: row[0])
        }
        return true
    }

    /// Creates a pgoutput slot on a replication connection and returns its consistent point.
    /// With `exportSnapshot` the connection must stay open and idle while another session
    /// reads under the returned snapshot name.
    /// A `temporary` slot is dropped when the connection closes.
    public static func createSlot(
        _ replication: PostgresSession, _ slot: String, exportSnapshot: Bool = false, temporary: Bool = false
    ) throws -> (lsn: LSN, snapshot: String?) {
        // A replication command takes no parameters: names are quoted into its text.
        let (kind, snapshot) = (temporary ? " TEMPORARY" : "", exportSnapshot ? "EXPORT_SNAPSHOT" : "NOEXPORT_SNAPSHOT")
        let r = try replication.query(
            PostgresDialect(schema: "").statement(
                "CREATE_REPLICATION_SLOT \(id: slot)\(raw: kind) LOGICAL pgoutput \(raw: snapshot)"
            ).text)
        guard let row = r.rows.first, let lsnText = row[1], let lsn = LSN(lsnText) else {
            throw PostgresError.slotCreation(lacks: "consistent point")
        }
        return (lsn, row[2])
    }

    /// Drops the slot if it exists and nobody uses it.
    public static func dropSlot(_ s: PostgresSession, _ slot: String) throws {
        try s.query(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND "
                + "database = current_database()",
            [slot])
    }

    /// Creates the replication origin that tags the adapter's own writes, if missing.
    public static func ensureOrigin(_ s: PostgresSession, _ name: String) throws {
        try s.query(
            "SELECT pg_replication_origin_create($1) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_origin "
                + "WHERE roname = $1)",
            [name])
    }

    /// The slot's confirmed position and how much WAL it keeps the server from recycling.
    public static func slotStatus(_ s: PostgresSession, _ slot: String) throws -> (
        confirmed: LSN?, retainedBytes: Int64, active: Bool
    )? {
        let r = try s.query(
            """
            SELECT confirmed_flush_lsn::text, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint, active
            FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()
            """, [slot])
        guard let row = r.rows.first else { return nil }
        return (row[0].flatMap(LSN.init), Int64(row[1] ?? "0") ?? 0, row[2] == "t")
    }
}
