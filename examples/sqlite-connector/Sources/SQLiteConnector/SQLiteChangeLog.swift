import GRDB
import RealmAdapter

/// The change stream of a SQLite database: triggers on each mapped table append every row
/// change, as JSON, to `realm_adapter_changes`, in commit order (SQLite has one writer at a
/// time, so sequence numbers never interleave between transactions).
///
/// The adapter's own writes are tagged: its transactions hold a row in `realm_adapter_origin`
/// while they run (deleted before they commit, so no other transaction ever sees it), and the
/// triggers copy that into `own`. Its state table is logged too: its rows are the markers.
/// Rows leave the log once the Realms hold them (``SQLiteConnector/processed(_:)``).
enum SQLiteChangeLog {
    static let table = "realm_adapter_changes"
    static let originTable = "realm_adapter_origin"
    static let stateTable = "realm_adapter_state"
    static let deadLetterTable = "realm_adapter_dead_letter"

    static func createTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(table) (seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    tbl TEXT NOT NULL, op TEXT NOT NULL, old TEXT, new TEXT, own INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS \(originTable) (id INTEGER PRIMARY KEY CHECK (id = 1),
                    adapter TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS \(stateTable) (adapter TEXT NOT NULL, path TEXT NOT NULL,
                    version INTEGER NOT NULL, PRIMARY KEY (adapter, path));
                CREATE TABLE IF NOT EXISTS \(deadLetterTable) (id INTEGER PRIMARY KEY, adapter TEXT NOT NULL,
                    path TEXT NOT NULL, version INTEGER NOT NULL, instructions TEXT NOT NULL, error TEXT NOT NULL,
                    failed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
                """)
    }

    /// (Re)creates the triggers of `table` over its current columns, keyed by `keyColumns`.
    static func follow(_ db: Database, table name: String, keyColumns: [String]) throws {
        let columns = try db.columns(in: name).map(\.name)
        func object(_ row: String, _ names: [String]) -> String {
            "json_object("
                + names.map { c in
                    let v = "\(row).\(SQLiteSQL.quote(c))"
                    let blob = "json_object('blob', hex(\(v)))"
                    return "\(SQLiteSQL.literal(c)), CASE typeof(\(v)) WHEN 'blob' THEN \(blob) ELSE \(v) END"
                }.joined(separator: ", ") + ")"
        }
        let own = "EXISTS (SELECT 1 FROM \(originTable))"
        let log = "INSERT INTO \(table) (tbl, op, old, new, own) VALUES (\(SQLiteSQL.literal(name))"
        let triggers = [
            ("insert", "AFTER INSERT", "\(log), 'insert', NULL, \(object("NEW", columns)), \(own))"),
            (
                "update", "AFTER UPDATE",
                "\(log), 'update', \(object("OLD", keyColumns)), \(object("NEW", columns)), \(own))"
            ),
            ("delete", "AFTER DELETE", "\(log), 'delete', \(object("OLD", columns)), NULL, \(own))"),
        ]
        for (op, when, body) in triggers {
            let trigger = SQLiteSQL.quote("realm_adapter_\(name)_\(op)")
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(trigger)")
            try db.execute(sql: "CREATE TRIGGER \(trigger) \(when) ON \(SQLiteSQL.quote(name)) BEGIN \(body); END")
        }
    }

    /// The last sequence number the log ever gave (0 before the first).
    static func lastSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table]) ?? 0
    }

    /// A position: the sequence number, zero-padded so that positions sort as strings.
    static func position(_ seq: Int64) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 19 - digits.count)) + digits
    }

    struct Entry {
        var seq: Int64
        var table: String
        var op: String
        var old: JSONValue?
        var new: JSONValue?
        var own: Bool
    }

    static func entries(_ db: Database, after seq: Int64) throws -> [Entry] {
        try Row.fetchAll(
            db, sql: "SELECT seq, tbl, op, old, new, own FROM \(table) WHERE seq > ? ORDER BY seq",
            arguments: [seq]
        ).map { r in
            Entry(
                seq: r[0], table: r[1], op: r[2], old: try (r[3] as String?).map { try JSONValue(parsing: $0) },
                new: try (r[4] as String?).map { try JSONValue(parsing: $0) }, own: r[5])
        }
    }

    /// Entries as transactions: each run of own or of other entries is one (a poll sees whole
    /// committed transactions only, so a run never splits one; it may join several).
    static func transactions(_ entries: [Entry], mapping: Mapping) -> [DatabaseTransaction] {
        var out: [DatabaseTransaction] = []
        var start = 0
        while start < entries.count {
            var end = start
            while end + 1 < entries.count && entries[end + 1].own == entries[start].own { end += 1 }
            let run = entries[start...end]
            var changes: [RowChange] = []
            var markers: [AppliedMarker] = []
            for e in run {
                if e.table == stateTable {
                    if case .string(let a)? = e.new?["adapter"], case .string(let p)? = e.new?["path"],
                        case .int(let v)? = e.new?["version"]
                    {
                        markers.append(AppliedMarker(adapter: a, path: p, version: v))
                    }
                    continue
                }
                if let change = change(e, mapping: mapping) { changes.append(change) }
            }
            let last = run.last!.seq
            out.append(
                DatabaseTransaction(
                    position: position(last), isOwn: run.first!.own, changes: changes,
                    token: UInt64(last), markers: markers))
            start = end + 1
        }
        return out
    }

    static func change(_ e: Entry, mapping: Mapping) -> RowChange? {
        let t = mapping.table(named: e.table)
        func row(_ json: JSONValue?) -> DatabaseRow? {
            guard case .object(let members)? = json else { return nil }
            return DatabaseRow(
                Dictionary(
                    members.map { m in
                        (m.key, SQLiteValues.value(json: m.value, kind: t?.column(named: m.key)?.kind))
                    }, uniquingKeysWith: { a, _ in a }))
        }
        switch e.op {
        case "insert": return row(e.new).map { .insert(table: e.table, row: $0) }
        case "update":
            guard let new = row(e.new) else { return nil }
            let old = row(e.old)
            let keyChanged = old.map { o in o.values.contains { new[$0.key] != $0.value } } ?? false
            return .update(table: e.table, row: new, oldKey: keyChanged ? old : nil)
        case "delete": return row(e.old).map { .delete(table: e.table, key: $0) }
        default: return nil
        }
    }
}
