import RealmAdapter

/// ``DatabaseWrite``s in the Postgres dialect: SQL with `$n` parameters in text format.
enum PostgresWrites {
    /// A statement and the writes it carries out: one (its affected count says whether it
    /// missed a row, ``SQLStatement/write``), or a run of rows sent as one JSON parameter, in
    /// which case an update or delete returns the ordinality of each row it found.
    /// `INSERT`s into `tables` (each with a `GENERATED ALWAYS` identity column) say `OVERRIDING
    /// SYSTEM VALUE`: a Realm object's key is its own. (`COPY` takes explicit values as given.)
    static func overridingIdentity(_ planned: [Planned], tables: Set<String>, schema: String) -> [Planned] {
        guard !tables.isEmpty else { return planned }
        let d = PostgresDialect(schema: schema)
        let prefixes = tables.map { "INSERT INTO \(d.table($0)) (" }
        return planned.map { p in
            let text = p.statement.text
            guard let prefix = prefixes.first(where: { text.hasPrefix($0) }) else { return p }
            // The end of the column list: its names are quoted, a `"` in one doubled.
            var i = text.index(text.startIndex, offsetBy: prefix.count)
            var quoted = false
            while i < text.endIndex, quoted || text[i] != ")" {
                if text[i] == "\"" { quoted.toggle() }
                i = text.index(after: i)
            }
            guard i < text.endIndex else { return p }
            var changed = p
            let end = text.index(after: i)
            changed.statement.text = String(text[..<end]) + " OVERRIDING SYSTEM VALUE" + String(text[end...])
            return changed
        }
    }

    /// The writes without the generated columns of `generated` (by table), which no write may set
    /// (the database's values come back to the Realm); an update left with nothing to set goes.
    static func withoutGenerated(_ writes: [DatabaseWrite], _ generated: [String: [String]]) -> [DatabaseWrite] {
        guard !generated.isEmpty else { return writes }
        return writes.compactMap { w in
            guard let columns = generated[w.table] else { return w }
            switch w {
            case .upsert(let t, let keys, var row, let scope):
                for c in columns where !keys.contains(c) && !scope.contains(c) { row.values[c] = nil }
                return .upsert(table: t, keyColumns: keys, row: row, scope: scope)
            case .insert(let t, var row):
                for c in columns { row.values[c] = nil }
                return .insert(table: t, row: row)
            case .update(let t, let key, var values):
                for c in columns { values.values[c] = nil }
                return values.values.isEmpty ? nil : .update(table: t, key: key, values: values)
            default:
                return w
            }
        }
    }

    struct Planned: Sendable {
        var statement: SQLStatement
        /// The writes of a run whose statement returns the ordinality (1-based) of each row
        /// found; empty for a statement that returns nothing of the kind.
        var returnsFound: [DatabaseWrite] = []
        /// A long run of upserts or inserts, sent first as `COPY` (``CopyRun``); then `statement`
        /// has no parameter yet: ``CopyRun/fallback(_:)`` gives the statement to run if the
        /// `COPY` fails.
        var copy: CopyRun?
        /// For a run of scoped upserts (``DatabaseWrite/upsert(table:keyColumns:row:scope:)``), its
        /// table and rows: each is inserted or updated unless a row of its key is another Realm's,
        /// so an affected count below `rows` is a refusal.
        var scoped: (table: String, rows: Int)?

        /// The refusal of a scoped upsert that found another Realm's row, if `result` shows one.
        func refusal(_ result: PostgresResult) -> PostgresError? {
            guard let scoped, result.affected < scoped.rows else { return nil }
            return PostgresError.rowOfAnotherRealm(table: scoped.table)
        }

        /// What the change stream should read again after `result`: each write of the run
        /// whose row the statement did not find, or the lone write's miss.
        func missedRows(_ result: PostgresResult) -> [RowReference] {
            guard !returnsFound.isEmpty else {
                return statement.write?.missedRow(affected: result.affected).map { [$0] } ?? []
            }
            let found = Set(result.rows.compactMap { row in row.first.flatMap { $0 }.flatMap { Int($0) } })
            return returnsFound.enumerated().compactMap { i, w in
                found.contains(i + 1) ? nil : w.missedRow(affected: 0)
            }
        }
    }

    /// The statements for a sequence of writes, in order. Runs of writes of one kind into the
    /// same table with the same columns become one statement whose rows travel as a single
    /// JSON parameter, turned into rows of the table's own type by `json_populate_recordset`
    /// (each value through its column type's input function, as a text parameter would be):
    /// Postgres parses one parameter instead of a `VALUES` list of thousands. A run ends where
    /// a key repeats (one statement cannot write the same row twice) or a value refers to
    /// another row's key (``DatabaseRow/references``: those go one by one, or as a multi-row
    /// `VALUES` upsert).
    ///
    /// - Parameters:
    ///   - conflictTargets: per table, the columns of `ON CONFLICT` when they are not its key
    ///     columns (``PostgresSchema/conflictTarget(_:_:)``).
    ///   - bulkTables: the tables runs may reach as JSON, each with the types of its json
    ///     columns (``PostgresSchema/bulkTables(_:schema:_:)``); other tables' runs go as before.
    /// - Parameter copyRows: runs of upserts or inserts of at least this many rows, into tables
    ///   of `bulkTables`, are planned as ``CopyRun``s (nil: none are).
    static func statements(
        _ writes: [DatabaseWrite], schema: String, conflictTargets: [String: [String]] = [:],
        bulkTables: [String: [String: String]] = [:], maxFields: Int = 100_000, copyRows: Int? = nil
    ) -> [Planned] {
        var out: [Planned] = []
        var run: [DatabaseWrite] = []
        var runShape: RunShape?
        var runKeys = Set<[Value]>(minimumCapacity: min(writes.count, 8192))
        func flush() {
            let first = out.count
            defer {
                // Scoped upserts: every row counts (inserted or updated), or one was refused.
                if let shape = runShape, shape.kind == .upsert, !shape.scope.isEmpty, out.count == first + 1 {
                    out[first].scoped = (shape.table, run.count)
                }
                run = []
                runShape = nil
                runKeys.removeAll(keepingCapacity: true)
            }
            guard let shape = runShape else { return }
            if run.count == 1 {
                out.append(Planned(statement: statement(run[0], schema: schema, conflictTargets: conflictTargets)))
            } else if let jsonColumns = bulkTables[shape.table], !shape.hasReferences {
                let text = bulkText(shape, jsonColumns, schema: schema, conflictTargets: conflictTargets)
                if let copyRows, run.count >= copyRows, shape.kind == .upsert || shape.kind == .insert {
                    out.append(
                        Planned(
                            statement: SQLStatement(text, []),
                            copy: CopyRun(shape, run, schema: schema)))
                } else {
                    out.append(
                        Planned(
                            statement: SQLStatement(text, [bulkJSON(run, shape)]),
                            returnsFound: shape.kind == .update || shape.kind == .delete ? run : []))
                }
            } else if shape.kind == .upsert {
                out.append(Planned(statement: multiRowUpsert(run, schema: schema, conflictTargets: conflictTargets)))
            } else {
                out += run.map { Planned(statement: statement($0, schema: schema, conflictTargets: conflictTargets)) }
            }
        }
        for w in writes {
            // The shape of a run is made once, at its first write; the next ones are checked against it.
            let shape: RunShape
            if let current = runShape, current.admits(w) {
                shape = current
            } else if let fresh = RunShape(w) {
                shape = fresh
            } else {
                flush()
                out.append(Planned(statement: statement(w, schema: schema, conflictTargets: conflictTargets)))
                continue
            }
            let key = shape.key(of: w)
            // Postgres takes at most 65,535 parameters: a VALUES upsert stays under 30,000.
            let limit = shape.hasReferences || bulkTables[shape.table] == nil ? min(maxFields, 30_000) : maxFields
            // A key is hashed once: inserted here, and again into the next run's set if it repeats.
            if runShape != shape || (run.count + 1) * shape.fields > limit
                || (shape.hasReferences && shape.kind != .upsert)
                || key.map({ !runKeys.insert($0).inserted }) == true
            {
                flush()
                if let key { runKeys.insert(key) }
            }
            run.append(w)
            runShape = shape
        }
        flush()
        return out
    }

    /// What writes must share to go in one statement: kind, table, columns, and the key
    /// columns and references of the rows.
    struct RunShape: Hashable, Sendable {
        enum Kind { case upsert, update, delete, insert }
        let kind: Kind
        let table: String
        /// The key columns (upsert, update, delete), in name order.
        let keyColumns: [String]
        /// Every column the statement writes or matches on, in name order.
        let columns: [String]
        let references: [String: KeyReference]
        /// An upsert's scope (``DatabaseWrite/upsert(table:keyColumns:row:scope:)``).
        var scope: [String] = []

        init?(_ w: DatabaseWrite) {
            switch w {
            case .upsert(let t, let keys, let row, let scope):
                (kind, table, keyColumns) = (.upsert, t, keys.sorted())
                (columns, references, self.scope) = (row.values.keys.sorted(), row.references, scope)
            case .update(let t, let key, let values):
                (kind, table, keyColumns) = (.update, t, key.values.keys.sorted())
                columns = Set(key.values.keys).union(values.values.keys).sorted()
                references = key.references.merging(values.references) { a, _ in a }
                // A column both matched and set cannot travel once in the row.
                guard Set(key.values.keys).isDisjoint(with: values.values.keys) else { return nil }
            case .delete(let t, let key):
                (kind, table, keyColumns) = (.delete, t, key.values.keys.sorted())
                (columns, references) = (keyColumns, key.references)
            case .insert(let t, let row):
                (kind, table, keyColumns) = (.insert, t, [])
                (columns, references) = (row.values.keys.sorted(), row.references)
            case .deleteAll, .updateAll, .closeGaps:
                return nil
            }
        }

        /// Whether `w` has this shape (checked without making the shape of `w`).
        func admits(_ w: DatabaseWrite) -> Bool {
            func same(_ row: DatabaseRow, _ names: [String]) -> Bool {
                row.values.count == names.count && names.allSatisfy { row.values[$0] != nil }
            }
            switch (kind, w) {
            case (.upsert, .upsert(let t, let keys, let row, let scope)):
                return t == table && keys.count == keyColumns.count && keys.allSatisfy(keyColumns.contains)
                    && same(row, columns) && row.references == references && scope == self.scope
            case (.update, .update(let t, let key, let values)):
                return t == table && same(key, keyColumns) && key.values.count + values.values.count == columns.count
                    && values.values.keys.allSatisfy { columns.contains($0) && key.values[$0] == nil }
                    && key.references.isEmpty && values.references.isEmpty && references.isEmpty
            case (.delete, .delete(let t, let key)):
                return t == table && same(key, keyColumns) && key.references == references
            case (.insert, .insert(let t, let row)):
                return t == table && same(row, columns) && row.references == references
            default:
                return false
            }
        }

        var hasReferences: Bool { !references.isEmpty }
        var fields: Int { columns.count }

        /// The row's key values; nil for inserts, whose rows may repeat.
        func key(of w: DatabaseWrite) -> [Value]? {
            switch w {
            case .upsert(_, _, let row, _): keyColumns.map { row[$0] ?? .null }
            case .update(_, let key, _), .delete(_, let key): keyColumns.map { key[$0] ?? .null }
            default: nil
            }
        }

        /// The row's value of `column` (a key column's or a set value's, for an update).
        func value(_ column: String, of w: DatabaseWrite) -> Value {
            switch w {
            case .upsert(_, _, let row, _), .insert(_, let row): row.values[column] ?? .null
            case .update(_, let key, let values): key.values[column] ?? values.values[column] ?? .null
            case .delete(_, let key): key.values[column] ?? .null
            default: .null
            }
        }
    }

    /// Appends `value` as a JSON string of the text Postgres parses (``PostgresType/encode(_:)``),
    /// or `null`; strings are escaped where they are, without a copy.
    static func appendText(_ value: Value, to json: inout [UInt8]) {
        switch value {
        case .null: json += "null".utf8
        case .int(let i):
            json.append(UInt8(ascii: "\""))
            json += String(i).utf8
            json.append(UInt8(ascii: "\""))
        case .string(let s): JSONValue.writeString(s, to: &json)
        default:
            if let text = PostgresType.encode(value) {
                JSONValue.writeString(text, to: &json)
            } else {
                json += "null".utf8
            }
        }
    }

    /// The statement for a run of writes without references, whose one parameter is its rows
    /// as one JSON array of objects (``bulkJSON(_:_:)``).
    /// - Parameter jsonColumns: the types of the table's json columns, whose text is cast to them.
    private static func bulkText(
        _ shape: RunShape, _ jsonColumns: [String: String], schema: String, conflictTargets: [String: [String]]
    ) -> String {
        let dialect = PostgresDialect(schema: schema)
        let table = dialect.table(shape.table)
        let rows = "json_populate_recordset(NULL::\(table), $1)"
        // The rows numbered (an update or delete returns the number of each row it found), under
        // names of our own: `WITH ORDINALITY` on the rows would clash with a column `ordinality`.
        let numbered =
            "json_array_elements($1) WITH ORDINALITY e(doc, n) CROSS JOIN LATERAL json_populate_record(NULL::\(table), e.doc) v"
        let columns = shape.columns.map(dialect.quote)
        func value(_ column: String) -> String {
            jsonColumns[column].map { "(v.\(dialect.quote(column)) #>> '{}')::\($0)" } ?? "v.\(dialect.quote(column))"
        }
        let key = shape.keyColumns.map { "t.\(dialect.quote($0)) = \(value($0))" }.joined(separator: " AND ")
        switch shape.kind {
        case .upsert, .insert:
            var text =
                "INSERT INTO \(table) (\(columns.joined(separator: ", "))) SELECT "
                + shape.columns.map(value).joined(separator: ", ") + " FROM \(rows) v"
            if shape.kind == .upsert {
                let target = (conflictTargets[shape.table] ?? shape.keyColumns).map(dialect.quote)
                text +=
                    " ON CONFLICT (\(target.joined(separator: ", "))) "
                    + DatabaseWrite.conflictAction(
                        shape.columns, keyColumns: shape.keyColumns, scope: shape.scope, table: table, dialect)
            }
            return text
        case .update:
            let sets = shape.columns.filter { !shape.keyColumns.contains($0) }.map {
                "\(dialect.quote($0)) = \(value($0))"
            }
            return "UPDATE \(table) t SET \(sets.joined(separator: ", ")) FROM \(numbered) WHERE \(key) RETURNING e.n"
        case .delete:
            return "DELETE FROM \(table) t USING \(numbered) WHERE \(key) RETURNING e.n"
        }
    }

    /// A run's rows as one JSON array of objects, every value as the text Postgres parses
    /// (``PostgresType/encode(_:)``): the parameter of ``bulkText(_:_:schema:conflictTargets:)``.
    static func bulkJSON(_ run: [DatabaseWrite], _ shape: RunShape) -> Value {
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(run.count * shape.columns.count * 16)
        let names = shape.columns.map { name -> [UInt8] in
            var quoted: [UInt8] = []
            JSONValue.writeString(name, to: &quoted)
            return quoted + [UInt8(ascii: ":")]
        }
        for (i, w) in run.enumerated() {
            if i > 0 { json.append(UInt8(ascii: ",")) }
            json.append(UInt8(ascii: "{"))
            for (c, column) in shape.columns.enumerated() {
                if c > 0 { json.append(UInt8(ascii: ",")) }
                json += names[c]
                appendText(shape.value(column, of: w), to: &json)
            }
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "]"))
        return .string(String(decoding: json, as: UTF8.self))
    }

    /// One `INSERT … VALUES (…), (…) ON CONFLICT` for a run of upserts with the same table and
    /// columns whose values refer to other rows' keys (each becomes a subquery).
    private static func multiRowUpsert(
        _ run: [DatabaseWrite], schema: String, conflictTargets: [String: [String]]
    ) -> SQLStatement {
        guard case .upsert(let table, let keyColumns, let first, let scope) = run[0] else {
            preconditionFailure("a run holds upserts only")
        }
        let dialect = PostgresDialect(schema: schema)
        let names = first.values.keys.sorted()
        var values: [Value] = []
        var tuples: [String] = []
        for w in run {
            guard case .upsert(_, _, let row, _) = w else { continue }
            let base = values.count
            let markers = names.enumerated().map { dialect.parameter(base + $0 + 1, referring: row.references[$1]) }
            tuples.append("(" + markers.joined(separator: ", ") + ")")
            values += names.map { row[$0] ?? .null }
        }
        let target = conflictTargets[table] ?? keyColumns
        let conflict =
            "ON CONFLICT (\(target.map(dialect.quote).joined(separator: ", "))) "
            + DatabaseWrite.conflictAction(
                names, keyColumns: keyColumns, scope: scope, table: dialect.table(table), dialect)
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
