import Foundation
import RealmAdapter

/// ``DatabaseWrite``s in T-SQL, tagged with the adapter's change-tracking context, in batches
/// of statements that each fit one `sp_executesql` call (SQL Server takes 2,100 parameters).
///
/// An upsert is an `UPDATE` under `UPDLOCK, HOLDLOCK` (a key-range lock: no other transaction
/// can insert the key in between) and, if it found no row, an `INSERT`. `MERGE` would do the
/// same in one statement, but its documented defects (and `CHANGE_TRACKING_CONTEXT`, which is
/// documented for `INSERT`, `UPDATE` and `DELETE`) make the two plain statements the safer choice.
enum SQLServerWrites {
    /// The batches for a sequence of writes, in order. A batch that carries one write alone
    /// carries it (``SQLStatement/write``).
    ///
    /// - Parameter context: the daemon's tag, at most 128 bytes (``context(name:)``); nil under
    ///   trigger capture, where the session carries it (``SQLServerTriggers/tagSession(_:)``).
    /// - Parameter maxParameters: per batch (default ``SQLServerParameters/limit``).
    /// - Parameter generated: per table, the column the database generates (an `IDENTITY`
    ///   `databasePrimaryKey`): SQL Server neither updates it nor takes it in an `INSERT`.
    static func batches(
        _ writes: [DatabaseWrite], schema: String, context: Data?, generated: [String: String] = [:],
        maxParameters: Int = SQLServerParameters.limit
    ) -> [SQLStatement] {
        var out: [SQLStatement] = []
        var batch = SQLStatement("")
        var count = 0
        func flush() {
            guard count > 0 else { return }
            out.append(batch)
            batch = SQLStatement("")
            count = 0
        }
        for var w in writes {
            if case .upsert(let table, let keys, var row, let scope) = w, let column = generated[table] {
                row.values[column] = nil
                w = .upsert(table: table, keyColumns: keys, row: row, scope: scope)
            }
            // Numbered after the batch's parameters; numbered again from 1 only when it starts the next.
            var s = statement(
                w, dialect: SQLServerDialect(schema: schema, firstParameter: batch.values.count + 1), context: context)
            if count > 0, batch.values.count + s.values.count > maxParameters {
                flush()
                s = statement(w, dialect: SQLServerDialect(schema: schema), context: context)
            }
            batch.text += (batch.text.isEmpty ? "" : "\n") + s.text
            batch.values += s.values
            batch.write = count == 0 ? w : nil
            count += 1
        }
        flush()
        return out
    }

    /// One write, tagged, ending with `;`.
    static func statement(_ write: DatabaseWrite, dialect d: SQLServerDialect, context: Data?) -> SQLStatement {
        let tag = Self.tag(context)
        switch write {
        case .upsert(let table, let keyColumns, let row, let scope):
            return upsert(table, keyColumns, scope, row, dialect: d, tag: tag)
        case .closeGaps(let table):
            // Positions are unique per owner (gaps only), so (owner, position) finds each row.
            let (owner, index) = (d.quote(LinkListMapping.ownerColumn), d.quote(LinkListMapping.indexColumn))
            return SQLStatement(
                "\(tag)UPDATE t SET \(index) = r.n FROM \(d.table(table)) AS t JOIN (SELECT \(owner), \(index), "
                    + "ROW_NUMBER() OVER (PARTITION BY \(owner) ORDER BY \(index)) - 1 AS n FROM \(d.table(table))) AS r "
                    + "ON r.\(owner) = t.\(owner) AND r.\(index) = t.\(index) WHERE t.\(index) <> r.n;")
        default:
            let s = write.statement(d)!
            return SQLStatement("\(tag)\(s.text);", s.values)
        }
    }

    /// `UPDATE`, then `INSERT` if no row had the key; the key's parameters serve both. A row of
    /// the key outside `scope` (another Realm's) is not updated, and the `INSERT` then fails on
    /// the key: the write is refused.
    private static func upsert(
        _ table: String, _ keyColumns: [String], _ scope: [String], _ row: DatabaseRow, dialect d: SQLServerDialect,
        tag: String
    ) -> SQLStatement {
        let names = row.values.keys.sorted()
        // A NULL is written as the literal: a parameter has a type (nvarchar), and Babelfish
        // refuses to assign an nvarchar, even NULL, to a datetimeoffset column.
        var values: [Value] = []
        let markers = names.map { name -> String in
            let value = row[name] ?? .null
            guard value != .null || row.references[name] != nil else { return "NULL" }
            values.append(value)
            return d.parameter(values.count, referring: row.references[name])
        }
        let marker = Dictionary(uniqueKeysWithValues: zip(names, markers))
        let key = (keyColumns + scope).map { "\(d.quote($0)) = \(marker[$0] ?? "NULL")" }.joined(separator: " AND ")
        let target = d.table(table)
        let insert =
            "\(tag)INSERT INTO \(target) (\(names.map(d.quote).joined(separator: ", "))) "
            + "VALUES (\(markers.joined(separator: ", ")));"
        let sets = names.filter { !keyColumns.contains($0) && !scope.contains($0) }.map {
            "\(d.quote($0)) = \(marker[$0]!)"
        }
        guard !sets.isEmpty else {
            return SQLStatement(
                "IF NOT EXISTS (SELECT 1 FROM \(target) WITH (UPDLOCK, HOLDLOCK) WHERE \(key)) BEGIN \(insert) END;",
                values)
        }
        return SQLStatement(
            "\(tag)UPDATE \(target) WITH (UPDLOCK, HOLDLOCK) SET \(sets.joined(separator: ", ")) WHERE \(key);\n"
                + "IF @@ROWCOUNT = 0 BEGIN \(insert) END;",
            values)
    }

    /// `WITH CHANGE_TRACKING_CONTEXT (…) `, the prefix that tags a statement; empty without a context.
    static func tag(_ context: Data?) -> String {
        context.map { "WITH CHANGE_TRACKING_CONTEXT (0x\($0.map { String(format: "%02X", $0) }.joined())) " } ?? ""
    }

    /// The change-tracking context that marks this daemon's writes: `realm-adapter:<name>`
    /// (``SQLServerOptions/trackingName``), cut to SQL Server's 128 bytes.
    static func context(name: String) -> Data { Data(("realm-adapter:" + name).utf8.prefix(128)) }

    /// The marker of a Realm transaction, in the same SQL transaction as its writes: the Realm
    /// version the database now holds, tagged so that the poller reads it as own.
    static func marker(adapter: String, path: String, version: Int64, _ d: SQLServerDialect, _ context: Data?)
        -> SQLStatement
    {
        let tag = Self.tag(context)
        return d.statement(
            """
            \(raw: tag)UPDATE \(table: SQLServerSQL.stateTable) WITH (UPDLOCK, HOLDLOCK) \
            SET version = \(version), updated_at = SYSUTCDATETIME() WHERE adapter = \(adapter) AND path = \(path);
            IF @@ROWCOUNT = 0 BEGIN \(raw: tag)INSERT INTO \(table: SQLServerSQL.stateTable) (adapter, path, version) \
            VALUES (\(adapter), \(path), \(version)); END;
            """)
    }

    /// RealmIds written into rows the database created without one, where they are still empty,
    /// tagged: the poller reads them back as own, and the Realm already holds them. In batches of
    /// at most `maxParameters` (two per row).
    static func realmIdUpdates(
        _ assignments: [RealmIdAssignment], schema: String, context: Data?,
        maxParameters: Int = SQLServerParameters.limit
    ) -> [SQLStatement] {
        let tag = Self.tag(context)
        var out: [SQLStatement] = []
        var batch = SQLStatement("")
        for a in assignments {
            if batch.values.count + 2 > maxParameters {
                out.append(batch)
                batch = SQLStatement("")
            }
            let d = SQLServerDialect(schema: schema, firstParameter: batch.values.count + 1)
            let s = d.statement(
                """
                \(raw: tag)UPDATE \(table: a.table) SET \(id: a.realmIdColumn) = \(a.realmId) \
                WHERE \(id: a.keyColumn) = \(a.key) AND \(id: a.realmIdColumn) IS NULL;
                """)
            batch.text += (batch.text.isEmpty ? "" : "\n") + s.text
            batch.values += s.values
        }
        if !batch.values.isEmpty { out.append(batch) }
        return out
    }
}
