import Foundation
import RealmAdapter

/// Change capture by triggers (`database.changeCapture` `triggers`): what the connector installs
/// where change tracking is unavailable (Babelfish) or may not be turned on (no `ALTER DATABASE`).
///
/// Each followed table gets one `AFTER INSERT, UPDATE, DELETE` trigger that appends a row per
/// changed key to ``logTable``: a sequence number (`IDENTITY`), the table, the operation, the
/// writer's tag (`SESSION_CONTEXT(N'realm_adapter')`, which the daemon sets on its own session,
/// as it tags its statements with `CHANGE_TRACKING_CONTEXT` under change tracking), and the key
/// parts (`sql_variant`). The poller reads the log in rounds and joins each key to its row.
///
/// **A sequence is not commit order**: a slow transaction can hold number 7 while 8 commits.
/// The ``gateTable`` closes that gap. A trigger first updates one gate row (`@@SPID` modulo
/// ``gateRows``) and keeps its lock to the end of its transaction, then draws its numbers. A
/// reader that locks every gate row has waited for every transaction that drew a number, and
/// no other can draw one until it lets go: the largest number it then reads is a watermark with
/// nothing in flight below it (``SQLServerTriggerReader``).
enum SQLServerTriggers {
    static let logTable = "realm_adapter_log"
    static let gateTable = "realm_adapter_gate"
    /// Rows of ``gateTable``. Two sessions whose ids are equal modulo this number wait for each
    /// other's transactions (only while both write followed tables).
    static let gateRows = 1024
    /// Key parts the log holds per row.
    static let maxKeyParts = 8
    /// The `SESSION_CONTEXT` key that carries the daemon's tag.
    static let contextKey = "realm_adapter"
    /// The start of every capture trigger's name; the rest is a hash of its definition.
    static let triggerPrefix = "realm_adapter_capture_"

    /// Creates the log and the gate (filled) where missing.
    static func createTables(_ d: SQLServerDialect) -> String {
        let keys = (1...maxKeyParts).map { "k\($0) sql_variant NULL" }.joined(separator: ", ")
        let gate = d.table(gateTable)
        return """
            IF OBJECT_ID(N'\(literal(d.table(logTable)))', N'U') IS NULL \
            CREATE TABLE \(d.table(logTable)) (seq bigint IDENTITY(1, 1) NOT NULL PRIMARY KEY, \
            table_name nvarchar(128) NOT NULL, op nchar(1) NOT NULL, ctx varbinary(128) NULL, \(keys));
            IF OBJECT_ID(N'\(literal(gate))', N'U') IS NULL \
            CREATE TABLE \(gate) (id int NOT NULL PRIMARY KEY, n bigint NOT NULL);
            IF (SELECT COUNT(*) FROM \(gate)) < \(gateRows) BEGIN \
            DELETE FROM \(gate); DECLARE @i int = 0; \
            WHILE @i < \(gateRows) BEGIN INSERT INTO \(gate) (id, n) VALUES (@i, 0); SET @i = @i + 1; END; END;
            """
    }

    /// `name` inside an `N'…'` literal.
    static func literal(_ name: String) -> String { name.replacingOccurrences(of: "'", with: "''") }

    /// The trigger's name: the prefix and a hash of what it captures, so that a trigger of an
    /// older definition (other key columns, another version of this code) is found and replaced.
    static func triggerName(_ table: TrackedTable, schema: String) -> String {
        let definition = "1|\(schema)|\(table.name)|" + table.keyColumns.joined(separator: "|")
        var hash: UInt64 = 14_695_981_039_346_656_037
        for b in definition.utf8 { hash = (hash ^ UInt64(b)) &* 1_099_511_628_211 }
        return triggerPrefix + String(hash, radix: 16)
    }

    /// `CREATE TRIGGER` for `table` (alone in its batch, as T-SQL requires).
    static func createTrigger(_ table: TrackedTable, _ d: SQLServerDialect) -> String {
        let name = d.quote(d.schema) + "." + d.quote(triggerName(table, schema: d.schema))
        let keys = table.keyColumns.map(d.quote)
        let parts = (1...keys.count).map { "k\($0)" }.joined(separator: ", ")
        func same(_ a: String, _ b: String) -> String {
            keys.map { "\(a).\($0) = \(b).\($0)" }.joined(separator: " AND ")
        }
        let log = "INSERT INTO \(d.table(logTable)) (table_name, op, ctx, \(parts))"
        let tableName = "N'\(literal(table.name))'"
        return """
            CREATE TRIGGER \(name) ON \(d.table(table.name)) AFTER INSERT, UPDATE, DELETE AS
            BEGIN
            SET NOCOUNT ON;
            IF NOT EXISTS (SELECT 1 FROM inserted) AND NOT EXISTS (SELECT 1 FROM deleted) RETURN;
            UPDATE \(d.table(gateTable)) SET n = n + 1 WHERE id = @@SPID % \(gateRows);
            DECLARE @ctx varbinary(128) = CAST(SESSION_CONTEXT(N'\(contextKey)') AS varbinary(128));
            \(log) SELECT \(tableName), N'D', @ctx, \(keys.map { "d.\($0)" }.joined(separator: ", "))
            FROM deleted AS d WHERE NOT EXISTS (SELECT 1 FROM inserted AS i WHERE \(same("i", "d")));
            \(log) SELECT \(tableName), CASE WHEN EXISTS (SELECT 1 FROM deleted AS d WHERE \(same("i", "d")))
            THEN N'U' ELSE N'I' END, @ctx, \(keys.map { "i.\($0)" }.joined(separator: ", ")) FROM inserted AS i;
            END
            """
    }

    /// The capture triggers of the schema's tables: table, trigger name.
    static func installed(_ d: SQLServerDialect) -> SQLStatement {
        d.statement(
            """
            SELECT OBJECT_NAME(t.parent_id), t.name FROM sys.triggers AS t \
            WHERE OBJECT_SCHEMA_NAME(t.parent_id) = \(d.schema) AND t.name LIKE N'realm[_]adapter[_]capture[_]%' \
            AND t.is_disabled = 0
            """)
    }

    /// Tags the session's writes as the daemon's own.
    static func tagSession(_ context: Data) -> String {
        "EXEC sp_set_session_context @key = N'\(contextKey)', @value = 0x"
            + context.map { String(format: "%02X", $0) }.joined() + ";"
    }

    /// The largest number in the log (0 when it is empty).
    static func lastNumber(_ d: SQLServerDialect) -> String {
        "SELECT COALESCE(MAX(seq), 0) FROM \(d.table(logTable));"
    }

    /// Waits for every transaction that holds a gate row, one row at a time: each statement
    /// commits on its own, so no writer waits behind the reader for longer than one row.
    static func passGate(_ d: SQLServerDialect) -> String {
        """
        DECLARE @i int = 0; WHILE @i < \(gateRows) BEGIN \
        UPDATE \(d.table(gateTable)) SET n = n WHERE id = @i; SET @i = @i + 1; END;
        """
    }

    /// How long a reader tries to take the whole gate at once before it waits row by row.
    static let holdTimeoutMs = 100

    /// Locks every gate row until the transaction ends.
    static func holdGate(_ d: SQLServerDialect) -> String {
        "BEGIN TRANSACTION; UPDATE \(d.table(gateTable)) SET n = n;"
    }

    /// Each change of `table` logged in (`after`, `upTo`], in order: number, operation, tag,
    /// the key parts (as `keyTypes` declare them), whether the row exists, then `columns` read
    /// with `expressions`.
    static func changes(
        _ table: TrackedTable, keyTypes: [String], columns: [String], expressions: [String], after: Int64,
        upTo: Int64, _ d: SQLServerDialect
    ) -> SQLStatement {
        // The parts are cast in a derived table, not in the join: with the cast in the join,
        // Babelfish compared every log row with every row of the table (169 s for 4,000 changes
        // of a 4,000-row table; 0.45 s so).
        let parts = keyTypes.indices.map { "k\($0 + 1)" }
        let cast = zip(parts, keyTypes).map { "CAST(\($0) AS \($1)) AS \($0)" }.joined(separator: ", ")
        let on = zip(table.keyColumns, parts).map { "t.\(d.quote($0)) = l.\($1)" }.joined(separator: " AND ")
        let exists = "CASE WHEN t.\(d.quote(table.keyColumns[0])) IS NULL THEN 0 ELSE 1 END"
        let values = zip(columns, expressions).map { c, e in
            e.replacingOccurrences(of: d.quote(c), with: "t.\(d.quote(c))")
        }
        let selected = (["l.seq", "l.op", "l.ctx"] + parts.map { "l.\($0)" } + [exists] + values).joined(
            separator: ", ")
        return d.statement(
            """
            SELECT \(raw: selected) FROM (SELECT seq, op, ctx, \(raw: cast) FROM \(table: logTable) \
            WHERE table_name = \(table.name) AND seq > \(after) AND seq <= \(upTo)) AS l \
            LEFT JOIN \(table: table.name) AS t ON \(raw: on) ORDER BY l.seq
            """)
    }

    /// Deletes what every adapter of the database has applied (the smallest resume point), a
    /// bounded batch at a time. The last row stays: its number is where the log is.
    static func trim(_ d: SQLServerDialect) -> String {
        """
        DECLARE @upTo bigint = (SELECT MIN(version) FROM \(d.table(SQLServerSQL.pollerTable)));
        DECLARE @last bigint = (SELECT MAX(seq) FROM \(d.table(logTable)));
        IF @upTo IS NOT NULL DELETE TOP (50000) FROM \(d.table(logTable)) WHERE seq <= @upTo AND seq < @last;
        """
    }
}
