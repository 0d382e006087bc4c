import RealmAdapter

/// What a database needs before the connector can follow it: change tracking on the database
/// and on each mapped table, snapshot isolation (the poller and the loader read each round in
/// one snapshot), and the permissions. Each problem comes with the statement that fixes it.
enum SQLServerSetup {
    /// The state the checks read, from ``query``'s three result sets.
    struct State: Equatable {
        /// `sys.change_tracking_databases` has a row for the database.
        var databaseTracked: Bool
        /// `sys.databases.snapshot_isolation_state` is 1 (ON).
        var snapshotIsolation: Bool
        /// The tables with change tracking on, as `schema.table`.
        var trackedTables: Set<String>
    }

    /// The three queries of ``State``, in one batch.
    static let query = """
        SELECT count(*) FROM sys.change_tracking_databases WHERE database_id = DB_ID();
        SELECT snapshot_isolation_state FROM sys.databases WHERE database_id = DB_ID();
        SELECT s.name + N'.' + t.name FROM sys.change_tracking_tables AS c
        JOIN sys.tables AS t ON t.object_id = c.object_id JOIN sys.schemas AS s ON s.schema_id = t.schema_id;
        """

    /// Each problem with the statement that fixes it, for the database `database` whose
    /// mapped tables are `tables` in `schema`. Empty when nothing is missing.
    /// Under trigger capture only snapshot isolation is needed (the connector installs the rest).
    static func problems(
        _ state: State, database: String, schema: String, tables: [String],
        capture: SQLServerOptions.ChangeCapture = .tracking
    ) -> [String] {
        let d = SQLServerDialect(schema: schema)
        var out: [String] = []
        guard capture == .tracking else {
            if !state.snapshotIsolation {
                out.append(
                    "snapshot isolation is off; turn it on: ALTER DATABASE \(d.quote(database)) "
                        + "SET ALLOW_SNAPSHOT_ISOLATION ON;")
            }
            return out
        }
        if !state.databaseTracked {
            out.append(
                "change tracking is off for the database; turn it on: ALTER DATABASE \(d.quote(database)) "
                    + "SET CHANGE_TRACKING = ON (CHANGE_RETENTION = 2 DAYS, AUTO_CLEANUP = ON);")
        }
        if !state.snapshotIsolation {
            out.append(
                "snapshot isolation is off; turn it on: ALTER DATABASE \(d.quote(database)) "
                    + "SET ALLOW_SNAPSHOT_ISOLATION ON;")
        }
        // Names compare as SQL Server compares them (case-insensitively by default).
        let tracked = Set(state.trackedTables.map { $0.lowercased() })
        for table in tables where !tracked.contains("\(schema).\(table)".lowercased()) {
            out.append(
                "change tracking is off for table \(schema).\(table); turn it on: ALTER TABLE \(d.table(table)) "
                    + "ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON);")
        }
        return out
    }

    /// The permissions a login that is not a sysadmin needs (the legacy documentation's list,
    /// with what it leaves out: ALTER on the schema to create tables, VIEW DATABASE STATE for row
    /// estimates), for `user` on `tables` and the connector's own tables.
    static func grants(user: String, schema: String, tables: [String], ownTables: [String]) -> [String] {
        let d = SQLServerDialect(schema: schema)
        let who = d.quote(user)
        var out = [
            "GRANT CREATE TABLE TO \(who);", "GRANT ALTER ON SCHEMA::\(d.quote(schema)) TO \(who);",
            "GRANT VIEW DATABASE STATE TO \(who);",
        ]
        for table in tables + ownTables {
            out.append(
                "GRANT SELECT, INSERT, UPDATE, DELETE, ALTER, VIEW CHANGE TRACKING ON \(d.table(table)) TO \(who);")
        }
        return out
    }
}
