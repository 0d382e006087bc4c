/// A write to the database, connector-neutral; a connector renders it in its dialect.
public enum DatabaseWrite: Hashable, Sendable {
    /// Insert the row, or update it if a row with the same key exists and has the row's values
    /// in the `scope` columns (the columns a per-user Realm's path fills: a Realm never takes
    /// over another user's row of the same key). A row of the key outside the scope refuses the
    /// write: the connector says so as the database's refusal.
    case upsert(table: String, keyColumns: [String], row: DatabaseRow, scope: [String] = [])
    case update(table: String, key: DatabaseRow, values: DatabaseRow)
    case delete(table: String, key: DatabaseRow)
    /// Delete every row that has these column values (all rows if empty).
    case deleteAll(table: String, matching: DatabaseRow)
    /// Set `values` in every row that has the `matching` column values (the links to an object
    /// being deleted, nulled as a Realm nulls them).
    case updateAll(table: String, matching: DatabaseRow, values: DatabaseRow)
    /// Insert a row (link tables, which have no key of their own).
    case insert(table: String, row: DatabaseRow)
    /// Renumber a link table's `idx` to 0, 1, 2… per `oid`, keeping the order (after rows were
    /// removed from the middle of lists).
    case closeGaps(table: String)

    public var table: String {
        switch self {
        case .upsert(let t, _, _, _), .update(let t, _, _), .delete(let t, _), .deleteAll(let t, _),
            .updateAll(let t, _, _), .insert(let t, _), .closeGaps(let t):
            t
        }
    }

    /// What to read again from the database once this write, having affected `affected` rows,
    /// comes back through the change stream (``DatabaseTransaction/missedRows``): an update or
    /// delete that found no row (another transaction may have inserted it after the statement
    /// began, and committed first), and every rewrite of a list's link rows (rows inserted so
    /// are not deleted). Nil when nothing can have been missed.
    public func missedRow(affected: Int) -> RowReference? {
        switch self {
        case .update(let table, let key, _), .delete(let table, let key):
            return affected == 0 ? RowReference(table: table, key: key) : nil
        case .deleteAll(let table, let matching)
        where Array(matching.values.keys) == [LinkListMapping.ownerColumn] && matching.references.isEmpty:
            return RowReference(table: table, key: matching)
        default:
            return nil
        }
    }
}

extension Mapping {
    /// The key columns of the row of an object of `t`: its key, or for a join object the parts
    /// of its string key (`"2-3"`; the parts themselves must not contain "-", except a uuid part,
    /// which takes the five groups of its own shape).
    public func keyRow(_ t: TableMapping, _ identity: Value) throws -> DatabaseRow {
        guard let parts = t.compoundKey else { return DatabaseRow([t.keyColumn: identity]) }
        let wanted = parts.map { $0.type == .uuid ? 5 : 1 }
        guard case .string(let text) = identity,
            case let pieces = text.split(separator: TableMapping.compoundKeySeparator, omittingEmptySubsequences: false),
            pieces.count == wanted.reduce(0, +)
        else {
            throw RealmAdapterError.compoundKeyParts(type: t.type.name, parts: parts.map(\.property))
        }
        var row = DatabaseRow()
        var next = 0
        for (part, count) in zip(parts, wanted) {
            let text = pieces[next..<next + count].joined(separator: TableMapping.compoundKeySeparator)
            next += count
            let value: Value? =
                switch part.type {
                case .int: Int64(text).map(Value.int)
                default: try? Value.string(text).coerced(to: part.type, optional: false)
                }
            guard let value else {
                throw RealmAdapterError.compoundKeyPart(type: t.type.name, part: part.property, of: part.type)
            }
            row[part.dbColumn] = value
        }
        return row
    }
}

extension Mapping {
    /// The database writes for one Realm transaction of the Realm at `path` (`WritePlanner`).
    ///
    /// Instructions on types, properties and Realms the mapping does not sync are skipped, as
    /// are schema instructions (tables come from `createSchema`). An edit of a primitive list
    /// writes the whole array, as `list` reads it from the Realm now: once writes stop, both
    /// sides hold the Realm's list.
    ///
    /// - Parameter list: the current elements of a list property (type, identity, property).
    public func databaseWrites(
        _ instructions: [Instruction], path realmPath: String,
        list: @escaping (String, Value, String) throws -> [Value]
    ) throws -> [DatabaseWrite] {
        guard let pathFields = path.extract(realmPath) else { return [] }
        var planner = WritePlanner(mapping: self, pathFields: pathFields, list: list)
        for instruction in instructions { try planner.plan(instruction) }
        return planner.writes
    }
}
