import RealmAdapter

/// ``DatabaseWrite``s in the Postgres dialect: SQL with `$n` parameters in text format.
enum PostgresWrites {
    /// The statements for a sequence of writes, in order. Runs of upserts into the same table
    /// with the same columns become one multi-row `INSERT … ON CONFLICT` (a bulk load from a
    /// Realm is mostly that), as long as no key repeats within the run: one statement cannot
    /// upsert the same row twice. Each statement comes with its write when it has one alone.
    ///
    /// - Parameter conflictTargets: per table, the columns of `ON CONFLICT` when they are not its
    ///   key columns (``PostgresSchema/conflictTarget(_:_:)``).
    static func statements(
        _ writes: [DatabaseWrite], schema: String, conflictTargets: [String: [String]] = [:],
        maxParameters: Int = 30_000
    ) -> [(String, [String?], DatabaseWrite?)] {
        var out: [(String, [String?], DatabaseWrite?)] = []
        var run: [DatabaseWrite] = []
        var runKeys = Set<[Value]>()
        func flush() {
            guard !run.isEmpty else { return }
            let (text, params) =
                run.count == 1
                ? sql(run[0], schema: schema, conflictTargets: conflictTargets)
                : multiRowUpsert(run, schema: schema, conflictTargets: conflictTargets)
            out.append((text, params, run.count == 1 ? run[0] : nil))
            run = []
            runKeys = []
        }
        for w in writes {
            guard case .upsert(let table, let keys, let row) = w else {
                flush()
                let (text, params) = sql(w, schema: schema, conflictTargets: conflictTargets)
                out.append((text, params, w))
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

    private static func multiRowUpsert(_ run: [DatabaseWrite], schema: String, conflictTargets: [String: [String]]) -> (
        String, [String?]
    ) {
        guard case .upsert(let table, let keyColumns, let first) = run[0] else {
            preconditionFailure("a run holds upserts only")
        }
        let dialect = PostgresDialect(schema: schema)
        let names = first.values.keys.sorted()
        var params: [String?] = []
        var tuples: [String] = []
        for w in run {
            guard case .upsert(_, _, let row) = w else { continue }
            let base = params.count
            tuples.append(
                "("
                    + names.enumerated().map { dialect.parameter(base + $0 + 1, referring: row.references[$1]) }
                    .joined(separator: ", ") + ")")
            params += names.map { PostgresType.encode(row[$0] ?? .null) }
        }
        let updates = names.filter { !keyColumns.contains($0) }.map {
            "\(PostgresSQL.quote($0)) = EXCLUDED.\(PostgresSQL.quote($0))"
        }
        let target = conflictTargets[table] ?? keyColumns
        let conflict =
            "ON CONFLICT (\(target.map(PostgresSQL.quote).joined(separator: ", "))) "
            + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", "))
        let sql =
            "INSERT INTO \(PostgresSQL.qualified(schema, table)) (\(names.map(PostgresSQL.quote).joined(separator: ", "))) VALUES \(tuples.joined(separator: ", ")) \(conflict)"
        return (sql, params)
    }

    static func sql(_ write: DatabaseWrite, schema: String, conflictTargets: [String: [String]] = [:]) -> (
        String, [String?]
    ) {
        guard let s = write.statement(PostgresDialect(schema: schema), conflictTarget: conflictTargets[write.table])
        else {
            // closeGaps: renumbered by row_number() over the physical rows.
            let table = PostgresSQL.qualified(schema, write.table)
            let (oid, idx) = (
                PostgresSQL.quote(LinkListMapping.ownerColumn), PostgresSQL.quote(LinkListMapping.indexColumn)
            )
            return (
                "UPDATE \(table) t SET \(idx) = r.n FROM (SELECT ctid AS row, row_number() OVER (PARTITION BY \(oid) ORDER BY \(idx)) - 1 AS n FROM \(table)) r WHERE t.ctid = r.row AND t.\(idx) <> r.n",
                []
            )
        }
        return (s.text, s.values.map(PostgresType.encode))
    }

    /// RealmIds written into rows that have none yet, one statement per table and 10,000 rows
    /// (the keys and ids as two arrays); rows that got one meanwhile keep theirs.
    static func realmIdUpdates(_ assignments: [RealmIdAssignment], schema: String) -> [(String, [String?])] {
        var order: [String] = []
        var byTable: [String: [RealmIdAssignment]] = [:]
        for a in assignments {
            if byTable[a.table] == nil { order.append(a.table) }
            byTable[a.table, default: []].append(a)
        }
        var out: [(String, [String?])] = []
        for table in order {
            let rows = byTable[table]!
            for start in stride(from: 0, to: rows.count, by: 10_000) {
                let chunk = rows[start..<min(start + 10_000, rows.count)]
                let a = chunk.first!
                let (key, id) = (PostgresSQL.quote(a.keyColumn), PostgresSQL.quote(a.realmIdColumn))
                let sql =
                    "UPDATE \(PostgresSQL.qualified(schema, table)) t SET \(id) = v.id FROM unnest($1::\(PostgresType.sqlType(for: a.keyType))[], $2::\(PostgresType.sqlType(for: a.realmIdType))[]) AS v(k, id) "
                    + "WHERE t.\(key) = v.k AND t.\(id) IS NULL"
                out.append(
                    (
                        sql,
                        [
                            PostgresType.encode(.list(chunk.map(\.key))),
                            PostgresType.encode(.list(chunk.map(\.realmId))),
                        ]
                    ))
            }
        }
        return out
    }
}
