/// Plans the database writes of one Realm transaction, instruction by instruction, for
/// ``Mapping/databaseWrites(_:path:list:)``.
///
/// Rows are keyed by their key columns and, in per-user tables, by the columns the Realm path
/// fills, so a row never lands in another user's Realm. Collections (arrays, lists of links)
/// are written whole, once per transaction each, from the Realm's current contents.
struct WritePlanner {
    let mapping: Mapping
    /// The values the Realm's path gives the `realm.path` template's columns.
    let pathFields: [String: String]
    /// The current elements of a list property (type, identity, property).
    let list: (String, Value, String) throws -> [Value]
    private(set) var writes: [DatabaseWrite] = []
    private var collectionsWritten: Set<String> = []

    init(mapping: Mapping, pathFields: [String: String], list: @escaping (String, Value, String) throws -> [Value]) {
        self.mapping = mapping
        self.pathFields = pathFields
        self.list = list
    }

    /// Adds the writes of one instruction (none for a type the mapping does not sync).
    mutating func plan(_ instruction: Instruction) throws {
        guard let t = mapping.table(forType: instruction.objectType) else { return }
        switch instruction {
        case .insert(_, let identity, let values), .set(_, let identity, let values):
            // Lists of links given with the object are written whole after its row.
            try writeRow(instruction, t)
            for l in t.linkLists where values[l.property.name] != nil { try rewrite(t, l, identity) }
        case .delete(_, let identity):
            // Its lists go before its row; and as Realm takes a deleted object out of every list
            // that held it, so does the database.
            for l in t.linkLists { writes.append(.deleteAll(table: l.table, matching: linkRow(l, owner: identity))) }
            for l in listsTargeting(t) {
                writes.append(.deleteAll(table: l.table, matching: linkRow(l, target: identity)))
                writes.append(.closeGaps(table: l.table))
            }
            // And it nulls every link to it: so does the database, before the row goes (a foreign
            // key without ON DELETE would refuse the DELETE).
            try nullLinks(to: t, identity)
            try writeRow(instruction, t)
        case .clear where mapping.path.isLiteral:
            for l in t.linkLists { writes.append(.deleteAll(table: l.table, matching: DatabaseRow())) }
            for l in listsTargeting(t) { writes.append(.deleteAll(table: l.table, matching: DatabaseRow())) }
            try writeRow(instruction, t)
        case .clear:
            // Only this Realm's objects go (the template's columns choose their rows); the
            // link-table rows of their lists, and those pointing at them, follow through the link
            // tables' foreign keys (ON DELETE CASCADE, as createSchema makes them).
            try writeRow(instruction, t)
            for l in listsTargeting(t) { writes.append(.closeGaps(table: l.table)) }
        case .listSet(_, let identity, let property, _, _), .listInsert(_, let identity, let property, _, _),
            .listErase(_, let identity, let property, _), .listClear(_, let identity, let property):
            if let l = t.linkLists.first(where: { $0.property.name == property }) {
                try rewrite(t, l, identity)
            } else {
                try writeArray(t, identity, property)
            }
        case .changeIdentity, .addType, .addProperties:
            return
        }
    }

    // MARK: Rows

    private mutating func writeRow(_ instruction: Instruction, _ t: TableMapping) throws {
        switch instruction {
        case .insert(_, let identity, let values):
            var row = try columns(t, values, room: t.keyColumns.count + mapping.path.fields.count)
            try addKey(t, identity, to: &row)
            // A new object's row is its Realm's: the template's columns take the path's values (a
            // NULL would make a row no Realm can hold, another user's value a row in two Realms),
            // and a row of its key in another user's Realm refuses the write. Moving an object to
            // another Realm is an update of them.
            let routing = try routing(t)
            for (c, v) in routing { row[c] = v }
            // Lists not given start empty, as the object's do.
            for c in t.columns { if case .array = c.kind, row[c.column] == nil { row[c.column] = .list([]) } }
            writes.append(.upsert(table: t.table, keyColumns: t.keyColumns, row: row, scope: routing.map(\.0)))
        case .set(_, let identity, let values):
            let row = try columns(t, values)
            if !row.values.isEmpty { writes.append(.update(table: t.table, key: try keyRow(t, identity), values: row)) }
        case .delete(_, let identity):
            writes.append(.delete(table: t.table, key: try keyRow(t, identity)))
        case .clear:
            // Only this Realm's rows: the template's fields are columns.
            var matching = DatabaseRow()
            for (c, v) in try routing(t) { matching[c] = v }
            writes.append(.deleteAll(table: t.table, matching: matching))
        default:
            return
        }
    }

    /// A primitive list (an array column), written whole.
    private mutating func writeArray(_ t: TableMapping, _ identity: Value, _ property: String) throws {
        guard let c = t.column(forProperty: property) else { return }
        guard collectionsWritten.insert("\(t.table).\(c.column)\u{0}\(identity)").inserted else { return }
        let values = DatabaseRow([c.column: .list(try list(t.type.name, identity, property))])
        writes.append(.update(table: t.table, key: try keyRow(t, identity), values: values))
    }

    /// The key columns of an object's row, with the columns its Realm's path fills, properties
    /// or not: an update or delete reaches this Realm's row only, never another user's of the
    /// same key.
    private func keyRow(_ t: TableMapping, _ identity: Value) throws -> DatabaseRow {
        var row = DatabaseRow()
        row.values.reserveCapacity(t.keyColumns.count + mapping.path.fields.count)
        try addKey(t, identity, to: &row)
        for (c, v) in try routing(t) { row[c] = v }
        return row
    }

    /// The template's columns, properties of `t` or not (``TableMapping/pathColumns``), with the
    /// values the Realm's path gives them: the columns every row of this Realm has.
    private func routing(_ t: TableMapping) throws -> [(String, Value)] {
        guard !mapping.path.isLiteral else { return [] }
        return try mapping.path.fields.compactMap { field in
            guard let text = pathFields[field] else { return nil }
            if t.pathColumns.contains(field) { return (field, .string(text)) }
            guard let c = t.columns.first(where: { $0.column == field }) else { return nil }
            // An int column's rows route by their value's text ("7"): a path with another text for
            // it ("007", "abc") names a Realm its rows never reach.
            guard c.plainScalar == .int else { return (field, .string(text)) }
            guard let n = Int64(text), String(n) == text else {
                throw RealmAdapterError.routingTextNotCanonical(table: t.table, column: field, type: "int")
            }
            return (field, .int(n))
        }
    }

    /// Adds the object's key columns to `row`.
    private func addKey(_ t: TableMapping, _ identity: Value, to row: inout DatabaseRow) throws {
        if t.compoundKey == nil {
            row[t.keyColumn] = identity
        } else {
            // The key holds its parts' database values (a link part's database key, not the
            // RealmId its link holds): no look-up by RealmId on those columns.
            for (k, v) in try mapping.keyRow(t, identity).values {
                row[k] = v
                row.references[k] = nil
            }
        }
    }

    /// The mapped columns of `values`; a link to a type with a database key refers to its row.
    /// The row is made with `room` for as many more columns (a dictionary that grows as it is
    /// filled is copied at each step: most of a backlog's mapping time, before).
    private func columns(_ t: TableMapping, _ values: PropertyValues, room: Int = 0) throws -> DatabaseRow {
        var row = DatabaseRow()
        row.values.reserveCapacity(values.count + room)
        let keyLinks = mapping.linksByDatabaseKey[t.type.name]
        for e in values {
            guard let c = t.column(forProperty: e.name) else { continue }
            // The database generates its key; a Realm never writes it empty.
            if e.value.isNull && c.column == t.databaseKey?.column { continue }
            if let target = keyLinks?[e.name], !e.value.isNull {
                row.references[c.column] = mapping.tables[target].reference!
            }
            do { row[c.column] = try c.databaseValue(e.value) } catch let err as RealmAdapterError {
                throw err.inColumn(table: t.table, column: c.column, type: t.type.name, property: e.name)
            }
        }
        return row
    }

    // MARK: Lists of links

    /// Nulls the link columns, of any type in this Realm, that hold the key of `t`'s object.
    private mutating func nullLinks(to t: TableMapping, _ identity: Value) throws {
        guard t.compoundKey == nil else { return }  // a join object's key is in no column
        for u in mapping.tables {
            for c in u.columns {
                guard case .link(let target, _) = c.kind, target == t.type.name else { continue }
                var matching = DatabaseRow([c.column: identity])
                if let reference = t.reference { matching.references[c.column] = reference }
                for (c, v) in try routing(u) { matching[c] = v }
                writes.append(.updateAll(table: u.table, matching: matching, values: DatabaseRow([c.column: .null])))
            }
        }
    }

    /// The lists of links, of any type, whose targets are objects of `t`.
    private func listsTargeting(_ t: TableMapping) -> [LinkListMapping] {
        mapping.tables.flatMap { other in other.linkLists.filter { $0.target == t.type.name } }
    }

    /// Rewrites one owner's list of links from the Realm's current contents.
    private mutating func rewrite(_ t: TableMapping, _ l: LinkListMapping, _ owner: Value) throws {
        guard collectionsWritten.insert("\(l.table)\u{0}\(owner)").inserted else { return }
        writes.append(.deleteAll(table: l.table, matching: linkRow(l, owner: owner)))
        for (i, target) in try list(t.type.name, owner, l.property.name).enumerated() {
            var row = linkRow(l, owner: owner, target: target)
            row[LinkListMapping.indexColumn] = .int(Int64(i))
            writes.append(.insert(table: l.table, row: row))
        }
    }

    /// A link-table row's owner and target columns (database keys looked up by RealmId where
    /// types have them).
    private func linkRow(_ l: LinkListMapping, owner: Value? = nil, target: Value? = nil) -> DatabaseRow {
        var row = DatabaseRow()
        for (column, value, type) in [
            (LinkListMapping.ownerColumn, owner, l.owner), (LinkListMapping.targetColumn, target, l.target),
        ] {
            guard let value else { continue }
            row[column] = value
            if let reference = mapping.table(forType: type)?.reference { row.references[column] = reference }
        }
        return row
    }
}
