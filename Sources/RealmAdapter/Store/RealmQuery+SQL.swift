extension RealmReader {
    /// `query` as an SQL condition on the rows of `t`'s table under `alias`, and its arguments.
    /// Every comparison is two-valued (a missing value is false, and its `NOT` true), as in Realm.
    /// - Parameter visibleTo: what the reader may see: a link's hidden target satisfies nothing.
    func condition(_ query: RealmQuery, _ t: ObjectSchema, alias: String, visibleTo: RealmAccess? = nil) throws
        -> (String, [StoreArgument])
    {
        switch query {
        case .always(let b):
            return (db.dialect.literal(b), [])
        case .not(let q):
            let (c, a) = try condition(q, t, alias: alias, visibleTo: visibleTo)
            return ("NOT (\(c))", a)
        case .and, .or:
            // A run of one operator is one flat list (a chain of 500 `||` would otherwise nest 500
            // brackets deep, past SQLite's parser stack).
            let isAnd = if case .and = query { true } else { false }
            var operands: [RealmQuery] = []
            var left = [query]
            while let q = left.popLast() {
                switch (q, isAnd) {
                case (.and(let l, let r), true), (.or(let l, let r), false): left += [r, l]
                default: operands.append(q)
                }
            }
            var (parts, arguments) = ([String](), [StoreArgument]())
            for o in operands {
                let (c, a) = try condition(o, t, alias: alias, visibleTo: visibleTo)
                parts.append("(\(c))")
                arguments += a
            }
            return (parts.joined(separator: isAnd ? " AND " : " OR "), arguments)
        case .compare(let path, let op, let value, let ci):
            return try compare(path[...], op, value, ci, t, alias: alias, visibleTo)
        }
    }

    private func compare(
        _ path: ArraySlice<String>, _ op: RealmQuery.Operator, _ value: Value, _ ci: Bool, _ t: ObjectSchema,
        alias: String, _ visibleTo: RealmAccess?
    ) throws -> (String, [StoreArgument]) {
        let tt = try tables.of(t, db: db)
        guard let j = t.properties.firstIndex(where: { $0.name == path.first }) else {
            throw RealmAdapterError.unknownProperty(type: t.name, property: path.first ?? "")
        }
        let p = t.properties[j]
        let realm = tables.realmId.storeArgument
        if path.count > 1, let target = p.type.linkTarget, let u = schema[type: target] {
            // Through a link: the rows whose link's target satisfies the rest.
            let ut = try tables.of(u, db: db)
            let inner = alias + "_" + String(j)
            var (c, a) = try compare(path.dropFirst(), op, value, ci, u, alias: inner, visibleTo)
            if let visibleTo {
                let (v, va) = try visibility(visibleTo, u, ut, alias: inner)
                (c, a) = ("\(v) AND \(c)", va + a)
            }
            if p.type.isList, let list = tt.listTables[j] {
                let l = inner + "l"
                return (
                    """
                    EXISTS (SELECT 1 FROM \(list) \(l) JOIN \(ut.table) \(inner) ON \(inner).realm = \(l).realm \
                    AND \(inner).\(TypeTables.key) = \(l).value WHERE \(l).realm = ? AND \(l).owner = \
                    \(alias).\(TypeTables.key) AND \(c))
                    """, [realm] + a
                )
            }
            guard let column = tt.columns[j] else {
                throw RealmAdapterError.unknownProperty(type: t.name, property: p.name)
            }
            return (
                "\(alias).\(column) IN (SELECT \(inner).\(TypeTables.key) FROM \(ut.table) \(inner) "
                    + "WHERE \(inner).realm = ? AND \(c))", [realm] + a
            )
        }
        guard let column = tt.columns[j] else {
            throw RealmAdapterError.unknownProperty(type: t.name, property: p.name)
        }
        let stored = "\(alias).\(column)"
        if value.isNull { return (op == .equal ? "\(stored) IS NULL" : "\(stored) IS NOT NULL", []) }
        let dialect = db.dialect
        // A column of keys (the primary key, a link) is compared as keys are kept, except by the
        // text operators, which read a key's text.
        let isKey = column == TypeTables.key || p.type.linkTarget != nil
        let textual = ci || [.beginsWith, .endsWith, .contains, .like].contains(op)
        let col = isKey && textual ? dialect.keyText(stored) : stored
        let v: StoreArgument = isKey && !textual ? .key(value) : .value(value)
        let (x, y) = ci ? ("lower(\(col))", "lower(?)") : (col, "?")
        let sql: String
        var args = [v]
        switch op {
        case .equal: sql = "\(x) = \(y)"
        case .notEqual: sql = dialect.isDistinct(x, from: y)
        case .less, .lessOrEqual, .greater, .greaterOrEqual: sql = "\(col) \(op.rawValue) ?"
        case .beginsWith:
            let (c, n) = dialect.beginsWith(x, y)
            (sql, args) = (c, Array(repeating: v, count: n))
        case .endsWith:
            let (c, n) = dialect.endsWith(x, y, column: col)
            (sql, args) = (c, Array(repeating: v, count: n))
        case .contains: sql = dialect.contains(x, y)
        case .like:
            guard case .string(let pattern) = value else { throw RealmAdapterError.unknownType("LIKE") }
            args = [.stored(.text(dialect.likePattern(pattern)))]
            sql = dialect.like(x, y)
        }
        return (dialect.definite(sql), args)
    }
}
