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
        case .upsert(_, let keyColumns, let row, let scope):
            let (names, markers) = builder.columns(row)
            let target = (conflictTarget ?? keyColumns).map(dialect.quote).joined(separator: ", ")
            return builder.finish(
                "INSERT INTO \(table) (\(names.map(dialect.quote).joined(separator: ", "))) "
                    + "VALUES (\(markers.joined(separator: ", "))) ON CONFLICT (\(target)) "
                    + Self.conflictAction(names, keyColumns: keyColumns, scope: scope, table: table, dialect))
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

extension DatabaseWrite {
    /// What an upsert does on a conflict: update the row's other columns, only where the row found
    /// has the `scope` columns' values (then every row counts as written: a row left out, of
    /// another Realm, shows in the affected count); nothing where there is nothing to update.
    public static func conflictAction(
        _ columns: [String], keyColumns: [String], scope: [String], table: String, _ dialect: some SQLDialect
    ) -> String {
        var updates = columns.filter { !keyColumns.contains($0) && !scope.contains($0) }
        if updates.isEmpty, let first = scope.first { updates = [first] }
        guard !updates.isEmpty else { return "DO NOTHING" }
        let sets = updates.map { "\(dialect.quote($0)) = EXCLUDED.\(dialect.quote($0))" }.joined(separator: ", ")
        guard !scope.isEmpty else { return "DO UPDATE SET " + sets }
        let conditions = scope.map { "\(table).\(dialect.quote($0)) = EXCLUDED.\(dialect.quote($0))" }
        return "DO UPDATE SET \(sets) WHERE " + conditions.joined(separator: " AND ")
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
