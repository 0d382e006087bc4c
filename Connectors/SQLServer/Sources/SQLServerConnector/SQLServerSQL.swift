import RealmAdapter

/// The connector's own tables and the statements that read SQL Server's catalog and change
/// tracking. Names go through ``SQLServerDialect``; values are parameters.
enum SQLServerSQL {
    static let stateTable = "realm_adapter_state"
    static let deadLetterTable = "realm_adapter_dead_letter"
    static let deadRowTable = "realm_adapter_dead_row"
    /// Per adapter, the change-tracking version the Realms hold (the poller's resume point).
    static let pollerTable = "realm_adapter_poller"

    /// Creates the connector's tables where missing (T-SQL has no `CREATE TABLE IF NOT EXISTS`).
    static func createOwnTables(_ d: SQLServerDialect) -> String {
        func create(_ table: String, _ columns: String) -> String {
            "IF OBJECT_ID(N'\(d.table(table).replacingOccurrences(of: "'", with: "''"))', N'U') IS NULL "
                + "CREATE TABLE \(d.table(table)) (\(columns));"
        }
        return [
            create(
                stateTable,
                "adapter nvarchar(128) NOT NULL, path nvarchar(450) NOT NULL, version bigint NOT NULL, "
                    + "updated_at datetime2 NOT NULL DEFAULT SYSUTCDATETIME(), PRIMARY KEY (adapter, path)"),
            create(
                deadLetterTable,
                "id bigint IDENTITY PRIMARY KEY, adapter nvarchar(128) NOT NULL, path nvarchar(450) NOT NULL, "
                    + "version bigint NOT NULL, instructions nvarchar(max) NOT NULL, error nvarchar(max) NOT NULL, "
                    + "failed_at datetime2 NOT NULL DEFAULT SYSUTCDATETIME()"),
            create(
                deadRowTable,
                "id bigint IDENTITY PRIMARY KEY, adapter nvarchar(128) NOT NULL, position nvarchar(64) NOT NULL, "
                    + "table_name nvarchar(256) NOT NULL, row_data nvarchar(max) NOT NULL, "
                    + "error nvarchar(max) NOT NULL, failed_at datetime2 NOT NULL DEFAULT SYSUTCDATETIME()"),
            create(pollerTable, "adapter nvarchar(128) NOT NULL PRIMARY KEY, version bigint NOT NULL"),
        ].joined(separator: "\n")
    }

    /// The connector's tables in the order ``ownTablesExisting(_:)`` answers for them.
    static let ownTables = [stateTable, deadLetterTable, deadRowTable, pollerTable]

    /// One row: 1 or 0 for each of ``ownTables``, whether it exists. `status`, `load --dry-run`
    /// and `dead-letter` read a database no `run` or `load` prepared yet, without creating anything.
    static func ownTablesExisting(_ d: SQLServerDialect) -> SQLStatement {
        let checks = ownTables.map { table in
            "CASE WHEN OBJECT_ID(N'\(d.table(table).replacingOccurrences(of: "'", with: "''"))', N'U') IS NULL "
                + "THEN 0 ELSE 1 END"
        }
        return SQLStatement("SELECT " + checks.joined(separator: ", ") + ";")
    }

    /// The newest rows of a dead-letter or dead-row `table` for `adapter`, newest first: the two
    /// columns that name it, the time (UTC), the error, and the start of `content`. Under a
    /// collation without supplementary characters `LEFT` counts UTF-16 units: a cut that would
    /// split a surrogate pair cuts before it.
    static func latest(_ table: String, _ names: String, _ content: String, _ adapter: String, _ d: SQLServerDialect)
        -> SQLStatement
    {
        let n = DatabaseStatus.excerptLength
        return d.statement(
            """
            SELECT TOP (\(raw: String(DatabaseStatus.listed))) \(raw: names), \
            CONVERT(nvarchar(19), failed_at, 120) + N' UTC', error, \
            CASE WHEN UNICODE(SUBSTRING(\(raw: content), \(raw: String(n)), 1)) BETWEEN 55296 AND 56319 \
            THEN LEFT(\(raw: content), \(raw: String(n - 1))) ELSE LEFT(\(raw: content), \(raw: String(n))) END \
            FROM \(table: table) WHERE adapter = \(adapter) ORDER BY id DESC;
            """)
    }

    /// The versions each Realm path of `adapter` has applied: no rows where the state table does
    /// not exist yet (T-SQL resolves the table's name only when the `SELECT` runs).
    static func appliedVersions(adapter: String, _ d: SQLServerDialect) -> SQLStatement {
        d.statement(
            """
            IF OBJECT_ID(\(d.table(stateTable)), N'U') IS NOT NULL \
            SELECT path, version FROM \(table: stateTable) WHERE adapter = \(adapter);
            """)
    }

    /// `database.createDatabase`: creates the database `name` if there is none (run in `master`).
    static func createDatabase(_ name: String) -> SQLStatement {
        let d = SQLServerDialect(schema: "")
        return d.statement("IF DB_ID(\(name)) IS NULL CREATE DATABASE \(id: name);")
    }

    /// Turns change tracking on for `table` if it is off (the database's must be on).
    static func track(_ table: String, _ d: SQLServerDialect) -> SQLStatement {
        d.statement(
            """
            IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = OBJECT_ID(\(d.table(table)))) \
            ALTER TABLE \(table: table) ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = OFF);
            """)
    }

    /// The columns and their types of the schema's tables: table, column, type, nullable,
    /// identity, computed.
    static func columns(_ schema: String) -> SQLStatement {
        SQLServerDialect(schema: schema).statement(
            """
            SELECT c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, CASE c.IS_NULLABLE WHEN 'YES' THEN 1 ELSE 0 END,
            COLUMNPROPERTY(OBJECT_ID(QUOTENAME(c.TABLE_SCHEMA) + '.' + QUOTENAME(c.TABLE_NAME)), c.COLUMN_NAME, 'IsIdentity'),
            COLUMNPROPERTY(OBJECT_ID(QUOTENAME(c.TABLE_SCHEMA) + '.' + QUOTENAME(c.TABLE_NAME)), c.COLUMN_NAME, 'IsComputed')
            FROM INFORMATION_SCHEMA.COLUMNS AS c JOIN INFORMATION_SCHEMA.TABLES AS t
            ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME AND t.TABLE_TYPE = 'BASE TABLE'
            WHERE c.TABLE_SCHEMA = \(schema) ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION
            """)
    }

    /// Each column's declared type, as a `CAST` names it: table, column, type, maximum length
    /// (-1: `max`), precision, scale, fractional seconds.
    static func declaredTypes(_ schema: String) -> SQLStatement {
        SQLServerDialect(schema: schema).statement(
            """
            SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, \
            DATETIME_PRECISION FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = \(schema)
            """)
    }

    /// Primary keys and unique constraints: table, constraint, kind (`PRIMARY KEY`/`UNIQUE`),
    /// column, in key order.
    static func keys(_ schema: String) -> SQLStatement {
        SQLServerDialect(schema: schema).statement(
            """
            SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, tc.CONSTRAINT_TYPE, k.COLUMN_NAME
            FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE AS k JOIN INFORMATION_SCHEMA.TABLE_CONSTRAINTS AS tc
            ON tc.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND tc.CONSTRAINT_NAME = k.CONSTRAINT_NAME
            WHERE k.TABLE_SCHEMA = \(schema) AND tc.CONSTRAINT_TYPE IN ('PRIMARY KEY', 'UNIQUE')
            ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION
            """)
    }

    /// Single-column foreign keys: table, column, referenced table, referenced column.
    static func foreignKeys(_ schema: String) -> SQLStatement {
        SQLServerDialect(schema: schema).statement(
            """
            SELECT OBJECT_NAME(f.parent_object_id), COL_NAME(f.parent_object_id, f.parent_column_id),
            OBJECT_NAME(f.referenced_object_id), COL_NAME(f.referenced_object_id, f.referenced_column_id)
            FROM sys.foreign_key_columns AS f
            WHERE OBJECT_SCHEMA_NAME(f.parent_object_id) = \(schema)
            AND (SELECT count(*) FROM sys.foreign_key_columns AS o WHERE o.constraint_object_id = f.constraint_object_id) = 1
            """)
    }

    /// The net changes of `table` after `version`, each with its row as it is now: operation,
    /// context, the key from the change table, whether the row exists, then `columns`
    /// (read with `expressions`).
    static func changes(
        _ table: String, keyColumns: [String], columns: [String], expressions: [String], since version: Int64,
        _ d: SQLServerDialect
    ) -> SQLStatement {
        let on = keyColumns.map { "t.\(d.quote($0)) = ct.\(d.quote($0))" }.joined(separator: " AND ")
        let keys = keyColumns.map { "ct.\(d.quote($0))" }.joined(separator: ", ")
        let exists = "CASE WHEN t.\(d.quote(keyColumns[0])) IS NULL THEN 0 ELSE 1 END"
        let values = zip(columns, expressions).map { c, e in
            e.replacingOccurrences(of: d.quote(c), with: "t.\(d.quote(c))")
        }
        let selected = (["ct.SYS_CHANGE_OPERATION", "ct.SYS_CHANGE_CONTEXT", keys, exists] + values).joined(
            separator: ", ")
        return d.statement(
            """
            SELECT \(raw: selected) FROM CHANGETABLE(CHANGES \(table: table), \(version)) AS ct \
            LEFT JOIN \(table: table) AS t ON \(raw: on) ORDER BY ct.SYS_CHANGE_VERSION
            """)
    }
}
