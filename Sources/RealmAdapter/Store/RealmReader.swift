import GRDB

/// An object as read from a Realm: its identity and its stored property values (lists as `.list`).
public struct RealmObject: Hashable, Sendable {
    public var objectType: String
    public var identity: Value
    public var values: PropertyValues

    public init(objectType: String, identity: Value, values: PropertyValues) {
        self.objectType = objectType
        self.identity = identity
        self.values = values
    }

    /// The object as JSON: `{"_identity": …, "prop": …}` in schema order.
    public var json: JSONValue {
        .object([.init("_identity", identity.json)] + values.map { .init($0.name, $0.value.json) })
    }
}

/// Reads objects and lists of one Realm inside a SQLite transaction (read or write).
struct RealmReader {
    let db: Database
    let tables: RealmTables
    let schema: Schema

    private func located(_ typeName: String) throws -> (ObjectSchema, Int) {
        guard let k = schema.types.firstIndex(where: { $0.name == typeName }) else {
            throw RealmAdapterError(.schemaViolation, "unknown type '\(typeName)'", context: ["type": typeName])
        }
        return (schema.types[k], k)
    }

    /// The key column, and the stored single-value properties with their ordinals and SQL types.
    private func columns(_ t: ObjectSchema) -> (key: String, keyType: ScalarType, [(Int, Property, ScalarType)]) {
        var cols: [(Int, Property, ScalarType)] = []
        for (j, p) in t.properties.enumerated() {
            switch p.type {
            case .scalar(let s): cols.append((j, p, s))
            case .link(let target): cols.append((j, p, RealmTables.keyType(of: schema[type: target]!)))
            default: break
            }
        }
        let key = t.primaryKey.map { pk in RealmTables.column(t.properties.firstIndex { $0.name == pk }!) } ?? "_key"
        return (key, RealmTables.keyType(of: t), cols)
    }

    func object(_ typeName: String, _ identity: Value) throws -> RealmObject? {
        let (t, k) = try located(typeName)
        let (key, _, cols) = columns(t)
        let sql = "SELECT \(cols.isEmpty ? "1" : cols.map { RealmTables.column($0.0) }.joined(separator: ", ")) FROM \(tables.table(k)) WHERE \(key) = ?"
        guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [try RealmTables.encode(identity)]) else { return nil }
        return try build(t, k, identity, row, cols)
    }

    /// Calls `body` with each object of the type in key order, streaming (never all in memory).
    func forEachObject(_ typeName: String, _ body: (RealmObject) throws -> Void) throws {
        let (t, k) = try located(typeName)
        let (key, keyType, cols) = columns(t)
        let sql = "SELECT \(key)\(cols.map { ", " + RealmTables.column($0.0) }.joined()) FROM \(tables.table(k)) ORDER BY \(key)"
        let rows = try Row.fetchCursor(db, sql: sql)
        while let row = try rows.next() {
            let id = RealmTables.decode(row[0] as DatabaseValue, as: keyType)
            try body(try build(t, k, id, row, cols, offset: 1))
        }
    }

    /// The identity of an object of the type whose `property` holds `value` (the first in key
    /// order if several do), or nil. Indexed for database keys.
    func identity(_ typeName: String, where property: String, equals value: Value) throws -> Value? {
        let (t, k) = try located(typeName)
        guard let j = t.properties.firstIndex(where: { $0.name == property }), case .scalar(let s) = t.properties[j].type else {
            throw RealmAdapterError(.schemaViolation, "\(typeName).\(property) is not a single-value property", context: ["type": typeName, "property": property])
        }
        let (key, keyType, _) = columns(t)
        let sql = "SELECT \(key) FROM \(tables.table(k)) WHERE \(RealmTables.column(j)) = ? ORDER BY \(key) LIMIT 1"
        guard let dv = try DatabaseValue.fetchOne(db.cachedStatement(sql: sql), arguments: [try RealmTables.encode(value.coerced(to: s, optional: false))]) else { return nil }
        return RealmTables.decode(dv, as: keyType)
    }

    func count(_ typeName: String) throws -> Int {
        let (_, k) = try located(typeName)
        return try Int.fetchOne(db, sql: "SELECT count(*) FROM \(tables.table(k))") ?? 0
    }

    func list(_ typeName: String, _ identity: Value, _ property: String) throws -> [Value] {
        let (t, k) = try located(typeName)
        guard let j = t.properties.firstIndex(where: { $0.name == property }), case .list(let element) = t.properties[j].type else {
            throw RealmAdapterError(.schemaViolation, "'\(typeName).\(property)' is not a list", context: ["type": typeName, "property": property])
        }
        let s: ScalarType = switch element {
        case .scalar(let s): s
        case .link(let target): RealmTables.keyType(of: schema[type: target]!)
        }
        let values = try DatabaseValue.fetchAll(db.cachedStatement(sql: "SELECT value FROM \(tables.listTable(k, j)) WHERE owner = ? ORDER BY idx"),
                                                arguments: [try RealmTables.encode(identity)])
        return values.map { RealmTables.decode($0, as: s) }
    }

    private func build(_ t: ObjectSchema, _ k: Int, _ id: Value, _ row: Row, _ cols: [(Int, Property, ScalarType)], offset: Int = 0) throws -> RealmObject {
        var values = PropertyValues()
        var c = 0
        for p in t.properties {
            switch p.type {
            case .scalar, .link:
                let (_, _, s) = cols[c]
                values.append(p.name, RealmTables.decode(row[offset + c] as DatabaseValue, as: s))
                c += 1
            case .list:
                values.append(p.name, .list(try list(t.name, id, p.name)))
            case .linkingObjects:
                continue
            }
        }
        return RealmObject(objectType: t.name, identity: id, values: values)
    }
}

extension RealmStore {
    /// All objects of `type` in the Realm at `path`, in key order. For large types prefer
    /// ``forEachObject(of:in:_:)``, which streams.
    public func objects(of type: String, in path: String) throws -> [RealmObject] {
        var out: [RealmObject] = []
        try forEachObject(of: type, in: path) { out.append($0) }
        return out
    }

    /// Calls `body` with each object of `type` in the Realm at `path`, from one consistent snapshot.
    public func forEachObject(of type: String, in path: String, _ body: (RealmObject) throws -> Void) throws {
        try read { db in try reader(db, path).forEachObject(type, body) }
    }

    /// The object of `type` with `identity` (primary key or row key), or nil.
    public func object(of type: String, identity: Value, in path: String) throws -> RealmObject? {
        try read { db in
            let r = try reader(db, path)
            return try r.object(type, try identity.coercedKey(of: type, in: r.schema))
        }
    }

    /// The identity of an object of `type` whose `property` holds `value`, in the Realm at
    /// `path`, or nil (also when there is no such Realm or type).
    public func identity(of type: String, where property: String, equals value: Value, in path: String) throws -> Value? {
        try read { db in
            guard try Self.realmRow(db, path) != nil else { return nil }
            let r = try reader(db, path)
            guard r.schema[type: type] != nil else { return nil }
            return try r.identity(type, where: property, equals: value)
        }
    }

    /// The number of objects of `type` in the Realm at `path`.
    public func count(of type: String, in path: String) throws -> Int {
        try read { db in try reader(db, path).count(type) }
    }

    /// The elements of a list property, in order (targets' identities for lists of links).
    public func list(_ property: String, of type: String, identity: Value, in path: String) throws -> [Value] {
        try read { db in
            let r = try reader(db, path)
            return try r.list(type, try identity.coercedKey(of: type, in: r.schema), property)
        }
    }

    func reader(_ db: Database, _ path: String) throws -> RealmReader {
        let row = try Self.requireRealm(db, path)
        return RealmReader(db: db, tables: RealmTables(realmId: row.id), schema: try schema(db, row))
    }
}
