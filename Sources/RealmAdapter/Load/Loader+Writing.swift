/// Batches into store transactions, one Realm transaction per Realm, and link checks.
extension Loader {
    /// Writes a batch as one store transaction (one Realm transaction per Realm it touches):
    /// `body` runs once per Realm with the batch's entries for it, in order.
    func write(
        _ batch: [Entry], _ run: LoadRun, _ body: (String, EntriesOfPath, inout WriteTransaction) throws -> Void
    ) throws {
        try write(paths: mapping.path.isLiteral ? [mapping.path.template] : Self.paths(of: batch), batch, run, body)
    }

    /// The Realms `entries` are for, in the order they first come.
    static func paths(of entries: [Entry]) -> [String] {
        var seen = Set<String>()
        var paths: [String] = []
        for e in entries where seen.insert(e.path).inserted { paths.append(e.path) }
        return paths
    }

    /// The same for the Realms at `paths` (some may have no entries).
    func write(
        paths: [String], _ batch: [Entry], _ run: LoadRun,
        _ body: (String, EntriesOfPath, inout WriteTransaction) throws -> Void
    ) throws {
        var byPath: [String: [Int]] = [:]
        if !mapping.path.isLiteral {
            for (i, e) in batch.enumerated() { byPath[e.path, default: []].append(i) }
        }
        let schema = mapping.schema
        let versions = try store.write(toEach: paths, origin: adapter.origin, passing: run.passing) { path, tx in
            run.known.begin(path, at: tx.baseVersion)
            try tx.adopt(schema)
            try body(
                path, EntriesOfPath(batch: batch, positions: mapping.path.isLiteral ? nil : byPath[path] ?? []), &tx)
        }
        for (path, version) in zip(paths, versions) { run.known.committed(path, at: version) }
        try Failpoint.loadAfterBatch.hit()
    }

    /// Checks that every link of `values` finds its target in the Realm; a missing target is an
    /// error naming table, column and key, or (`danglingForeignKeys: nullify`) a null link.
    /// Returns how many links it set to null.
    func checkLinks(_ values: inout PropertyValues, of identity: Value, _ t: TableMapping, _ tx: WriteTransaction)
        throws -> Int
    {
        var nulled = 0
        let keyLinks = mapping.linksByDatabaseKey[t.type.name]
        for (i, e) in values.enumerated() {
            guard !e.value.isNull, let c = t.column(forProperty: e.name), case .link(let target, _) = c.kind else {
                continue
            }
            if let tt = keyLinks?[e.name] {
                // A database key: the target is the object that has it.
                if let id = try tx.identity(
                    of: target, where: mapping.tables[tt].databaseKey!.property, equals: e.value)
                {
                    values.setValue(id, at: i)
                    continue
                }
            } else if try tx.exists(target, e.value) {
                continue
            }
            guard configuration.danglingForeignKeys == .nullify else {
                throw danglingError(t.table, c.column, key: identity, refersTo: target, e.value)
            }
            values.setValue(.null, at: i)
            nulled += 1
        }
        return nulled
    }

    func danglingError(_ table: String, _ column: String, key: Value?, refersTo target: String, _ value: Value)
        -> RealmAdapterError
    {
        RealmAdapterError(
            .danglingForeignKey,
            "Table \(table), column \(column)\(key.map { ", row with key \(Mapping.keyText($0))" } ?? ""): "
                + "the foreign key refers to a \(target) with key \(Mapping.keyText(value)), which the Realm "
                + "does not have (the row is missing from the database, or its table was left out of "
                + "--tables). Fix the row, or set loader.danglingForeignKeys to \"nullify\" to load "
                + "it with a null link.",
            context: ["db.table": table, "db.column": column])
    }

}
