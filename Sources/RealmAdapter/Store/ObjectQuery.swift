import GRDB

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

    public init(
        sortBy: String? = nil, descending: Bool = false, offset: Int = 0, limit: Int? = nil, filter: String? = nil
    ) {
        self.filter = filter
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
        let direction = query.descending ? " DESC" : ""
        var order = "o." + TypeTables.key + direction
        if let p = query.sortBy {
            guard let j = t.properties.firstIndex(where: { $0.name == p }) else {
                throw RealmAdapterError.unknownProperty(type: t.name, property: p)
            }
            guard let column = tt.columns[j] else { throw RealmAdapterError.notSortable(type: t.name, property: p) }
            if column != TypeTables.key { order = "o.\(column)\(direction), o.\(TypeTables.key)" }
        }
        let values = ([TypeTables.key] + tt.columns.compactMap { $0 }).map { "o." + $0 }
        var (condition, arguments) = ("1", [DatabaseValue]())
        if let filter = query.filter {
            (condition, arguments) = try self.condition(RealmQuery(filter, type: t, schema: schema), t, alias: "o")
        }
        let sql = """
            SELECT \(values.joined(separator: ", ")) FROM \(tt.table) o WHERE o.realm = ? AND (\(condition))
            ORDER BY \(order) LIMIT ? OFFSET ?
            """
        let rows = try Row.fetchCursor(
            db, sql: sql,
            arguments: StatementArguments(
                [tables.realmId.databaseValue] + arguments
                    + [(query.limit ?? -1).databaseValue, max(0, query.offset).databaseValue]))
        let keyType = RealmTables.keyType(of: t)
        var out: [RealmObject] = []
        while let row = try rows.next() {
            let id = RealmTables.decode(row[0] as DatabaseValue, as: keyType)
            out.append(try build(t, id) { row[$0 + 1] as DatabaseValue })
        }
        return out
    }
}

extension RealmStore {
    /// The objects of `type` in the Realm at `path` that `query` selects, sorted and paged by SQLite.
    public func objects(of type: String, in path: String, _ query: ObjectQuery) throws -> [RealmObject] {
        try read { db in try reader(db, path).objects(type, query) }
    }
}

extension RealmAdapterError {
    static func notSortable(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "\(type).\(property) is a list: objects are sorted by a property of a single value.",
            context: ["type": type, "property": property])
    }
}
