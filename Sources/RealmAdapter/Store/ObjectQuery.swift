/// Which objects of a type to read, and in what order: sorted and paged by SQLite (the
/// server's GraphQL queries), so that a page costs what it holds, not every object of the type.
public struct ObjectQuery: Sendable, Hashable {
    /// The single-value property to sort by (not a list); the key when nil.
    public var sortBy: String?
    /// Largest first.
    public var descending: Bool
    /// Objects to skip.
    public var offset: Int
    /// At most this many objects; all when nil.
    public var limit: Int?
    /// Only the objects this filter selects (``RealmQuery``'s language), all when nil.
    public var filter: String?
    /// Only the objects whose link (or list of links) `property` points at the object `identity`:
    /// the objects a `linkingObjects` property computes.
    public var linkingTo: Backlink?

    /// Only what this access may read (fine-grained permissions), all when nil: the objects
    /// selected, and every object the filter reaches through links (a hidden target is as
    /// missing, so that no filter tests what its reader may not see).
    public var visibleTo: RealmAccess?

    /// The objects whose `property` links to the object `identity`.
    public struct Backlink: Sendable, Hashable {
        public var property: String
        public var identity: Value
        public init(property: String, identity: Value) {
            self.property = property
            self.identity = identity
        }
    }

    public init(
        sortBy: String? = nil, descending: Bool = false, offset: Int = 0, limit: Int? = nil, filter: String? = nil,
        linkingTo: Backlink? = nil, visibleTo: RealmAccess? = nil
    ) {
        self.visibleTo = visibleTo
        self.filter = filter
        self.linkingTo = linkingTo
        self.sortBy = sortBy
        self.descending = descending
        self.offset = offset
        self.limit = limit
    }
}

extension RealmReader {
    /// The objects of the type that `query` selects, in its order (ties in key order).
    func objects(_ typeName: String, _ query: ObjectQuery) throws -> [RealmObject] {
        let (t, tt) = try located(typeName)
        let rows = try select(query, t, tt, columns: [TypeTables.key] + tt.columns.compactMap { $0 })
        let keyType = RealmTables.keyType(of: t)
        var out: [RealmObject] = []
        while let row = try rows.next() {
            let id = RealmTables.decode(db.dialect.storedKey(row[0]), as: keyType)
            out.append(try build(t, id) { row[$0 + 1] as StoredValue })
        }
        return out
    }

    /// The values of some single-value properties (scalars, links as their target's key) of
    /// each object `query` selects, in its order, a row at a time: a projection, which reads
    /// only those columns and builds no object.
    func forEachRow(
        _ typeName: String, _ query: ObjectQuery, properties: [String], _ body: ([Value]) throws -> Void
    ) throws {
        let (t, tt) = try located(typeName)
        var columns: [String] = []
        var types: [ScalarType] = []
        var keys: [Bool] = []
        for name in properties {
            guard let j = t.properties.firstIndex(where: { $0.name == name }) else {
                throw RealmAdapterError.unknownProperty(type: t.name, property: name)
            }
            guard let column = tt.columns[j] else { throw RealmAdapterError.notSortable(type: t.name, property: name) }
            switch t.properties[j].type {
            case .scalar(let s): types.append(s)
            case .link(let target): types.append(RealmTables.keyType(of: schema[type: target]!))
            default: throw RealmAdapterError.notSortable(type: t.name, property: name)
            }
            columns.append(column)
            keys.append(column == TypeTables.key || t.properties[j].type.linkTarget != nil)
        }
        let rows = try select(query, t, tt, columns: columns.isEmpty ? [TypeTables.key] : columns)
        var values = [Value](repeating: .null, count: columns.count)
        while let row = try rows.next() {
            for k in values.indices {
                let stored: StoredValue = row[k]
                values[k] = RealmTables.decode(keys[k] ? db.dialect.storedKey(stored) : stored, as: types[k])
            }
            try body(values)
        }
    }

    /// The rows (`columns` of alias `o`) of the objects `query` selects, in its order.
    private func select(_ query: ObjectQuery, _ t: ObjectSchema, _ tt: TypeTables, columns: [String]) throws
        -> StoreCursor
    {
        let direction = query.descending ? " DESC" : ""
        var order = "o." + TypeTables.key + direction
        var orderArguments: [StoreArgument] = []
        if let p = query.sortBy {
            guard let j = t.properties.firstIndex(where: { $0.name == p }) else {
                throw RealmAdapterError.unknownProperty(type: t.name, property: p)
            }
            guard let column = tt.columns[j] else { throw RealmAdapterError.notSortable(type: t.name, property: p) }
            if column != TypeTables.key {
                var sorted = "o." + column
                // By a link: a target the reader may not see sorts as a null link would, so that
                // the order says nothing of it.
                if let access = query.visibleTo, let target = t.properties[j].type.linkTarget,
                    let u = schema[type: target]
                {
                    let ut = try tables.of(u, db: db)
                    let (v, a) = try visibility(access, u, ut, alias: "s")
                    if v != db.dialect.literal(true) {
                        sorted =
                            "(CASE WHEN EXISTS (SELECT 1 FROM \(ut.table) s WHERE s.realm = ? "
                            + "AND s.\(TypeTables.key) = o.\(column) AND \(v)) THEN o.\(column) END)"
                        orderArguments = [tables.realmId.storeArgument] + a
                    }
                }
                let nulls = db.dialect.nullsSortFirst(descending: query.descending)
                order = "\(sorted)\(direction)\(nulls), o.\(TypeTables.key)"
            }
        }
        let (condition, arguments) = try selection(query, t, tt)
        let sql = """
            SELECT \(columns.map { "o." + $0 }.joined(separator: ", ")) FROM \(tt.table) o
            WHERE o.realm = ? AND (\(condition)) ORDER BY \(order) LIMIT ? OFFSET ?
            """
        return try StoreRow.fetchCursor(
            db, sql: sql,
            arguments: StoreArguments(
                [tables.realmId.storeArgument] + arguments + orderArguments
                    + [
                        .stored(query.limit.map { .integer(Int64($0)) } ?? db.dialect.noLimit),
                        .stored(.integer(Int64(max(0, query.offset)))),
                    ]))
    }

    /// How many objects of the type `query`'s filter and link select (its order and page aside).
    func count(_ typeName: String, _ query: ObjectQuery) throws -> Int {
        let (t, tt) = try located(typeName)
        let (condition, arguments) = try selection(query, t, tt)
        let sql = "SELECT count(*) FROM \(tt.table) o WHERE o.realm = ? AND (\(condition))"
        return try Int.fetchOne(
            db, sql: sql, arguments: StoreArguments([tables.realmId.storeArgument] + arguments)) ?? 0
    }

    /// The SQL condition (on alias `o`) of `query`'s filter and link, and its arguments.
    private func selection(_ query: ObjectQuery, _ t: ObjectSchema, _ tt: TypeTables) throws -> (
        String, [StoreArgument]
    ) {
        var (condition, arguments) = (db.dialect.literal(true), [StoreArgument]())
        if let filter = query.filter {
            (condition, arguments) = try self.condition(
                RealmQuery(filter, type: t, schema: schema), t, alias: "o", visibleTo: query.visibleTo)
        }
        if let link = query.linkingTo {
            let (c, a) = try linking(link, t, tt)
            (condition, arguments) = ("(\(condition)) AND \(c)", arguments + a)
        }
        if let access = query.visibleTo {
            let (c, a) = try visibility(access, t, tt, alias: "o")
            (condition, arguments) = ("(\(condition)) AND \(c)", arguments + a)
        }
        return (condition, arguments)
    }
}

extension RealmReader {
    /// The condition on `t`'s rows (alias `o`) that their link `property` points at `identity`.
    fileprivate func linking(_ link: ObjectQuery.Backlink, _ t: ObjectSchema, _ tt: TypeTables) throws -> (
        String, [StoreArgument]
    ) {
        guard let j = t.properties.firstIndex(where: { $0.name == link.property }),
            t.properties[j].type.linkTarget != nil
        else {
            throw RealmAdapterError.notALink(type: t.name, property: link.property)
        }
        let key = StoreArgument.key(link.identity)
        if let list = tt.listTables[j] {
            return (
                "o.\(TypeTables.key) IN (SELECT owner FROM \(list) WHERE realm = ? AND value = ?)",
                [tables.realmId.storeArgument, key]
            )
        }
        guard let column = tt.columns[j] else {
            throw RealmAdapterError.notALink(type: t.name, property: link.property)
        }
        return ("o.\(column) = ?", [key])
    }
}

extension RealmStore {
    /// The objects of `type` in the Realm at `path` that `query` selects, sorted and paged by SQLite.
    public func objects(of type: String, in path: String, _ query: ObjectQuery) throws -> [RealmObject] {
        try read { db in try reader(db, path).objects(type, query) }
    }

    /// The values of `properties` (single-value ones: scalars, and links as their target's key)
    /// of each object of `type` that `query` selects in the Realm at `path`, in its order, a row
    /// at a time, from one snapshot. It reads only those columns: what a server answering for a
    /// few properties of many objects wants.
    public func forEachRow(
        of type: String, in path: String, _ query: ObjectQuery, properties: [String],
        _ body: ([Value]) throws -> Void
    ) throws {
        try read { db in try reader(db, path).forEachRow(type, query, properties: properties, body) }
    }

    /// The objects of `type` in the Realm at `path` that `query` selects, one page of them, and
    /// how many it selects in all (from one snapshot).
    public func page(of type: String, in path: String, _ query: ObjectQuery) throws -> (
        objects: [RealmObject], count: Int
    ) {
        try read { db in
            let r = try reader(db, path)
            return (try r.objects(type, query), try r.count(type, query))
        }
    }
}

extension RealmAdapterError {
    static func notALink(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "\(type).\(property) is not a link or a list of links: nothing can link through it.",
            context: ["type": type, "property": property])
    }

    static func notSortable(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "\(type).\(property) is a list: objects are sorted by a property of a single value.",
            context: ["type": type, "property": property])
    }
}
