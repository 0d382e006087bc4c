/// A write to the database, connector-neutral; a connector renders it in its dialect.
public enum DatabaseWrite: Hashable, Sendable {
    /// Insert the row, or update it if a row with the same key exists.
    case upsert(table: String, keyColumns: [String], row: DatabaseRow)
    case update(table: String, key: DatabaseRow, values: DatabaseRow)
    case delete(table: String, key: DatabaseRow)
    /// Delete every row that has these column values (all rows if empty).
    case deleteAll(table: String, matching: DatabaseRow)
    /// Insert a row (link tables, which have no key of their own).
    case insert(table: String, row: DatabaseRow)
    /// Renumber a link table's `idx` to 0, 1, 2… per `oid`, keeping the order (after rows were
    /// removed from the middle of lists).
    case closeGaps(table: String)

    public var table: String {
        switch self {
        case .upsert(let t, _, _), .update(let t, _, _), .delete(let t, _), .deleteAll(let t, _), .insert(let t, _),
            .closeGaps(let t):
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
    /// of its string key (`"2-3"`; the parts themselves must not contain "-").
    public func keyRow(_ t: TableMapping, _ identity: Value) throws -> DatabaseRow {
        guard let parts = t.compoundKey else { return DatabaseRow([t.keyColumn: identity]) }
        guard case .string(let text) = identity,
            case let pieces = text.split(separator: TableMapping.compoundKeySeparator, omittingEmptySubsequences: false),
            pieces.count == parts.count
        else {
            throw RealmAdapterError.compoundKeyParts(type: t.type.name, parts: parts.map(\.property))
        }
        var row = DatabaseRow()
        for (part, piece) in zip(parts, pieces) {
            let text = String(piece)
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
    /// The database writes for one Realm transaction of the Realm at `path`.
    ///
    /// Instructions on types, properties and Realms the mapping does not sync are skipped, as
    /// are schema instructions (tables come from `createSchema`). An edit of a primitive list
    /// writes the whole array, as `list` reads it from the Realm now: once writes stop, both sides hold the
    /// Realm's list.
    ///
    /// - Parameter list: the current elements of a list property (type, identity, property).
    public func databaseWrites(
        _ instructions: [Instruction], path realmPath: String,
        list: (String, Value, String) throws -> [Value]
    ) throws -> [DatabaseWrite] {
        guard let pathFields = path.extract(realmPath) else { return [] }
        var writes: [DatabaseWrite] = []
        // Collections (arrays, link lists) are written whole, once per transaction each.
        var collectionsWritten: Set<String> = []
        func keyRow(_ t: TableMapping, _ identity: Value) throws -> DatabaseRow {
            var row = try self.keyRow(t, identity)
            // Per-user tables share keys across users only if the path columns are part of the key;
            // they are always written, so a row never lands in another user's Realm.
            for c in t.pathColumns { row[c] = .string(pathFields[c]!) }
            return row
        }
        func columns(_ t: TableMapping, _ values: PropertyValues) throws -> DatabaseRow {
            var row = DatabaseRow()
            let keyLinks = linksByDatabaseKey[t.type.name]
            for e in values {
                guard let c = t.column(forProperty: e.name) else { continue }
                // The database generates its key; a Realm never writes it empty.
                if e.value.isNull && c.column == t.databaseKey?.column { continue }
                if let target = keyLinks?[e.name], !e.value.isNull {
                    row.references[c.column] = tables[target].reference!
                }
                do { row[c.column] = try c.databaseValue(e.value) } catch let err as RealmAdapterError {
                    throw err.inColumn(table: t.table, column: c.column, type: t.type.name, property: e.name)
                }
            }
            return row
        }
        /// Rewrites one owner's list of links from the Realm's current contents.
        func rewrite(_ t: TableMapping, _ l: LinkListMapping, _ owner: Value) throws {
            guard collectionsWritten.insert("\(l.table)\u{0}\(owner)").inserted else { return }
            writes.append(.deleteAll(table: l.table, matching: linkRow(l, owner: owner)))
            for (i, target) in try list(t.type.name, owner, l.property.name).enumerated() {
                var row = linkRow(l, owner: owner, target: target)
                row[LinkListMapping.indexColumn] = .int(Int64(i))
                writes.append(.insert(table: l.table, row: row))
            }
        }
        for instruction in instructions {
            guard let t = table(forType: instruction.objectType) else { continue }
            switch instruction {
            case .insert(_, let identity, let values), .set(_, let identity, let values):
                // Lists of links given with the object are written whole after its row.
                try writeRow(instruction, t)
                for l in t.linkLists where values[l.property.name] != nil { try rewrite(t, l, identity) }
                continue
            case .delete(_, let identity):
                // Its lists go before its row; and as Realm takes a deleted object out of every
                // list that held it, so does the database.
                for l in t.linkLists {
                    writes.append(.deleteAll(table: l.table, matching: linkRow(l, owner: identity)))
                }
                for other in tables {
                    for l in other.linkLists where l.target == t.type.name {
                        writes.append(.deleteAll(table: l.table, matching: linkRow(l, target: identity)))
                        writes.append(.closeGaps(table: l.table))
                    }
                }
            case .clear where path.isLiteral:
                for l in t.linkLists { writes.append(.deleteAll(table: l.table, matching: DatabaseRow())) }
                for other in tables {
                    for l in other.linkLists where l.target == t.type.name {
                        writes.append(.deleteAll(table: l.table, matching: DatabaseRow()))
                    }
                }
            case .clear:
                // Only this Realm's objects go (the template's columns choose their rows); the
                // link-table rows of their lists, and those pointing at them, follow through the
                // link tables' foreign keys (ON DELETE CASCADE, as createSchema makes them).
                try writeRow(instruction, t)
                for other in tables {
                    for l in other.linkLists where l.target == t.type.name { writes.append(.closeGaps(table: l.table)) }
                }
                continue
            case .listSet(_, let identity, let property, _, _), .listInsert(_, let identity, let property, _, _),
                .listErase(_, let identity, let property, _), .listClear(_, let identity, let property):
                if let l = t.linkLists.first(where: { $0.property.name == property }) {
                    try rewrite(t, l, identity)
                    continue
                }
            default:
                break
            }
            try writeRow(instruction, t)
        }
        return writes

        /// A link-table row's owner and target columns (database keys looked up by RealmId where types have them).
        func linkRow(_ l: LinkListMapping, owner: Value? = nil, target: Value? = nil) -> DatabaseRow {
            var row = DatabaseRow()
            for (column, value, type) in [
                (LinkListMapping.ownerColumn, owner, l.owner), (LinkListMapping.targetColumn, target, l.target),
            ] {
                guard let value else { continue }
                row[column] = value
                if let reference = table(forType: type)?.reference { row.references[column] = reference }
            }
            return row
        }

        func writeRow(_ instruction: Instruction, _ t: TableMapping) throws {
            switch instruction {
            case .insert(_, let identity, let values):
                var row = try columns(t, values)
                for (k, v) in try keyRow(t, identity).values { row[k] = v }
                // Lists not given start empty, as the object's do.
                for c in t.columns where row[c.column] == nil { if case .array = c.kind { row[c.column] = .list([]) } }
                writes.append(.upsert(table: t.table, keyColumns: t.keyColumns, row: row))
            case .set(_, let identity, let values):
                let row = try columns(t, values)
                if !row.values.isEmpty {
                    writes.append(.update(table: t.table, key: try keyRow(t, identity), values: row))
                }
            case .delete(_, let identity):
                writes.append(.delete(table: t.table, key: try keyRow(t, identity)))
            case .clear:
                // Only this Realm's rows: the template's fields are columns.
                var matching = DatabaseRow()
                for (field, value) in pathFields { matching[field] = .string(value) }
                writes.append(.deleteAll(table: t.table, matching: matching))
            case .listSet(_, let identity, let property, _, _), .listInsert(_, let identity, let property, _, _),
                .listErase(_, let identity, let property, _), .listClear(_, let identity, let property):
                guard let c = t.column(forProperty: property) else { return }
                guard collectionsWritten.insert("\(t.table).\(c.column)\u{0}\(identity)").inserted else { return }
                writes.append(
                    .update(
                        table: t.table, key: try keyRow(t, identity),
                        values: DatabaseRow([c.column: .list(try list(t.type.name, identity, property))])))
            case .changeIdentity, .addType, .addProperties:
                return
            }
        }
    }
}
