import RealmAdapter

/// ``DatabaseWrite``s in the Postgres dialect: SQL with `$n` parameters in text format.
enum PostgresWrites {
    /// The statements for a sequence of writes, in order. Runs of upserts into the same table
    /// with the same columns become one multi-row `INSERT … ON CONFLICT` (a bulk load from a
    /// Realm is mostly that), as long as no key repeats within the run: one statement cannot
    /// upsert the same row twice. A statement of one write carries it (``SQLStatement/write``).
    ///
    /// - Parameter conflictTargets: per table, the columns of `ON CONFLICT` when they are not its
    ///   key columns (``PostgresSchema/conflictTarget(_:_:)``).
    static func statements(
        _ writes: [DatabaseWrite], schema: String, conflictTargets: [String: [String]] = [:],
        maxParameters: Int = 30_000
    ) -> [SQLStatement] {
        var out: [SQLStatement] = []
        var run: [DatabaseWrite] = []
        var runKeys = Set<[Value]>()
        func flush() {
            guard !run.isEmpty else { return }
            out.append(
                run.count == 1
                    ? statement(run[0], schema: schema, conflictTargets: conflictTargets)
                    : multiRowUpsert(run, schema: schema, conflictTargets: conflictTargets))
            run = []
            runKeys = []
        }
        for w in writes {
            guard case .upsert(let table, let keys, let row) = w else {
                flush()
                out.append(statement(w, schema: schema, conflictTargets: conflictTargets))
                continue
            }
            let key = keys.map { row[$0] ?? .null }
            if let first = run.first, case .upsert(let t0, let k0, let r0) = first,
                t0 != table || k0 != keys || Set(r0.values.keys) != Set(row.values.keys)
                    || r0.references != row.references || runKeys.contains(key)
                    || (run.count + 1) * row.values.count > maxParameters
            {
                flush()
            }
            run.append(w)
            runKeys.insert(key)
        }
        flush()
        return out
    }

    /// One `INSERT … VALUES (…), (…) ON CONFLICT` for a run of upserts with the same table and columns.
    private static func multiRowUpsert(
        _ run: [DatabaseWrite], schema: String, conflictTargets: [String: [String]]
    ) -> SQLStatement {
        guard case .upsert(let table, let keyColumns, let first) = run[0] else {
            preconditionFailure("a run holds upserts only")
        }
        let dialect = PostgresDialect(schema: schema)
        let names = first.values.keys.sorted()
        var values: [Value] = []
        var tuples: [String] = []
        for w in run {
            guard case .upsert(_, _, let row) = w else { continue }
            let base = values.count
            let markers = names.enumerated().map { dialect.parameter(base + $0 + 1, referring: row.references[$1]) }
            tuples.append("(" + markers.joined(separator: ", ") + ")")
            values += names.map { row[$0] ?? .null }
        }
        let updates = names.filter { !keyColumns.contains($0) }.map {
            "\(dialect.quote($0)) = EXCLUDED.\(dialect.quote($0))"
        }
        let target = conflictTargets[table] ?? keyColumns
        let conflict =
            "ON CONFLICT (\(target.map(dialect.quote).joined(separator: ", "))) "
            + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", "))
        let columns = names.map(dialect.quote).joined(separator: ", ")
        return SQLStatement(
            "INSERT INTO \(dialect.table(table)) (\(columns)) VALUES \(tuples.joined(separator: ", ")) \(conflict)",
            values)
    }

    /// The statement of one write; `closeGaps` renumbers by `row_number()` over the physical rows.
    static func statement(_ write: DatabaseWrite, schema: String, conflictTargets: [String: [String]] = [:])
        -> SQLStatement
    {
        let dialect = PostgresDialect(schema: schema)
        if let s = write.statement(dialect, conflictTarget: conflictTargets[write.table]) { return s }
        let table = dialect.table(write.table)
        let (owner, index) = (dialect.quote(LinkListMapping.ownerColumn), dialect.quote(LinkListMapping.indexColumn))
        return SQLStatement(
            "UPDATE \(table) t SET \(index) = r.n FROM (SELECT ctid AS row, row_number() OVER "
                + "(PARTITION BY \(owner) ORDER BY \(index)) - 1 AS n FROM \(table)) r "
                + "WHERE t.ctid = r.row AND t.\(index) <> r.n",
            write: write)
    }

    /// RealmIds written into rows that have none yet, one statement per table and 10,000 rows
    /// (the keys and ids as two arrays); rows that got one meanwhile keep theirs.
    static func realmIdUpdates(_ assignments: [RealmIdAssignment], schema: String) -> [SQLStatement] {
        let dialect = PostgresDialect(schema: schema)
        var order: [String] = []
        var byTable: [String: [RealmIdAssignment]] = [:]
        for a in assignments {
            if byTable[a.table] == nil { order.append(a.table) }
            byTable[a.table, default: []].append(a)
        }
        var out: [SQLStatement] = []
        for table in order {
            let rows = byTable[table]!
            for start in stride(from: 0, to: rows.count, by: 10_000) {
                let chunk = rows[start..<min(start + 10_000, rows.count)]
                let a = chunk.first!
                let (key, id) = (dialect.quote(a.keyColumn), dialect.quote(a.realmIdColumn))
                let (keyType, idType) = (PostgresType.sqlType(for: a.keyType), PostgresType.sqlType(for: a.realmIdType))
                out.append(
                    SQLStatement(
                        "UPDATE \(dialect.table(table)) t SET \(id) = v.id FROM unnest($1::\(keyType)[], "
                            + "$2::\(idType)[]) AS v(k, id) WHERE t.\(key) = v.k AND t.\(id) IS NULL",
                        [.list(chunk.map(\.key)), .list(chunk.map(\.realmId))]))
            }
        }
        return out
    }
}
