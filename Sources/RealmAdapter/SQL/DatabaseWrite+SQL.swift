extension DatabaseWrite {
    /// The statement for this write in `dialect`, or nil for ``closeGaps(table:)``, which every
    /// dialect renumbers its own way; it carries this write (``SQLStatement/write``). Columns go in name order; a value that refers to another
    /// row's database key (``DatabaseRow/references``) becomes a subquery that finds it.
    ///
    /// - Parameter conflictTarget: the columns of an upsert's `ON CONFLICT` when they are not its
    ///   key columns (a Postgres partitioned table).
    public func statement(_ dialect: some SQLDialect, conflictTarget: [String]? = nil) -> SQLStatement? {
        var statement = text(dialect, conflictTarget: conflictTarget)
        statement?.write = self
        return statement
    }

    private func text(_ dialect: some SQLDialect, conflictTarget: [String]?) -> SQLStatement? {
        var builder = StatementBuilder(dialect: dialect)
        let table = dialect.table(self.table)
        switch self {
        case .upsert(_, let keyColumns, let row):
            let (names, markers) = builder.columns(row)
            let updates = names.filter { !keyColumns.contains($0) }.map {
                "\(dialect.quote($0)) = EXCLUDED.\(dialect.quote($0))"
            }
            let target = (conflictTarget ?? keyColumns).map(dialect.quote).joined(separator: ", ")
            let action = updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", ")
            return builder.finish(
                "INSERT INTO \(table) (\(names.map(dialect.quote).joined(separator: ", "))) "
                    + "VALUES (\(markers.joined(separator: ", "))) ON CONFLICT (\(target)) \(action)")
        case .update(_, let key, let values):
            let (names, markers) = builder.columns(values)
            let sets = zip(names, markers).map { "\(dialect.quote($0)) = \($1)" }.joined(separator: ", ")
            let conditions = builder.conditions(key)
            return builder.finish("UPDATE \(table) SET \(sets) WHERE \(conditions)")
        case .delete(_, let key):
            let conditions = builder.conditions(key)
            return builder.finish("DELETE FROM \(table) WHERE \(conditions)")
        case .deleteAll(_, let matching):
            if matching.values.isEmpty { return SQLStatement("DELETE FROM \(table)") }
            let conditions = builder.conditions(matching)
            return builder.finish("DELETE FROM \(table) WHERE \(conditions)")
        case .updateAll(_, let matching, let values):
            let (names, markers) = builder.columns(values)
            let sets = zip(names, markers).map { "\(dialect.quote($0)) = \($1)" }.joined(separator: ", ")
            let conditions = builder.conditions(matching)
            return builder.finish("UPDATE \(table) SET \(sets) WHERE \(conditions)")
        case .insert(_, let row):
            let (names, markers) = builder.columns(row)
            return builder.finish(
                "INSERT INTO \(table) (\(names.map(dialect.quote).joined(separator: ", "))) "
                    + "VALUES (\(markers.joined(separator: ", ")))")
        case .closeGaps:
            return nil
        }
    }
}

/// Numbers parameters in the order they are added.
struct StatementBuilder<Dialect: SQLDialect> {
    let dialect: Dialect
    var values: [Value] = []

    /// A parameter holding `value`, or the database key a RealmId parameter refers to.
    mutating func marker(_ value: Value, _ reference: KeyReference?) -> String {
        values.append(value)
        return dialect.parameter(values.count, referring: reference)
    }

    /// A row's columns in name order, and their markers.
    mutating func columns(_ row: DatabaseRow) -> (names: [String], markers: [String]) {
        let ordered = row.values.sorted { $0.key < $1.key }
        return (ordered.map(\.key), ordered.map { marker($0.value, row.references[$0.key]) })
    }

    /// `a = $1 AND b = $2` for a key's columns in name order.
    mutating func conditions(_ key: DatabaseRow) -> String {
        let (names, markers) = columns(key)
        return zip(names, markers).map { "\(dialect.quote($0)) = \($1)" }.joined(separator: " AND ")
    }

    func finish(_ text: String) -> SQLStatement { SQLStatement(text, values) }
}
