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
    let db: any StoreConnection
    let tables: RealmTables
    let schema: Schema

    func located(_ typeName: String) throws -> (ObjectSchema, TypeTables) {
        guard let t = schema[type: typeName] else {
            throw RealmAdapterError.unknownType(typeName)
        }
        return (t, try tables.of(t, db: db))
    }

    /// The identity held in a column of keys of `typeName` (a row key for a type it does not have).
    func key(_ stored: StoredValue, of typeName: String) -> Value {
        RealmTables.decode(db.dialect.storedKey(stored), as: schema[type: typeName].map(RealmTables.keyType) ?? .int)
    }

    /// A database change reads the object it changes: one statement, its columns read in place.
    func object(_ typeName: String, _ identity: Value) throws -> RealmObject? {
        let (t, tt) = try located(typeName)
        let stmt = try db.cachedStatement(sql: tt.selectObject)
        stmt.reset()
        defer { stmt.reset() }
        stmt.bind(tables.realmId, at: 1)
        // Keys are ints, strings, UUIDs or ObjectIds: only a string holding NUL fails to bind,
        // and no object can have that key.
        guard (try? stmt.bind(key: identity, at: 2)) != nil else { return nil }
        guard try stmt.step() else { return nil }
        return try build(t, identity) { stmt.column(Int32($0)) }
    }

    /// Which of `keys` (identities of `typeName`, coerced: a string key holds no NUL) have an
    /// object, looked up ``RealmWriter/keysPerLookup`` at a time.
    func existingKeys(_ typeName: String, among keys: [Value]) throws -> Set<Value> {
        let (_, tt) = try located(typeName)
        var found = Set<Value>()
        for start in stride(from: 0, to: keys.count, by: RealmWriter.keysPerLookup) {
            let (list, bound) = RealmWriter.keyList(keys[start..<min(start + RealmWriter.keysPerLookup, keys.count)])
            var arguments: StoreArguments = [tables.realmId]
            for k in bound { arguments.append(StoreArgument.key(k)) }
            let sql = "SELECT key FROM \(tt.table) WHERE realm = ? AND key IN \(list)"
            for stored in try StoredValue.fetchAll(db.cachedStatement(sql: sql), arguments: arguments) {
                found.insert(key(stored, of: typeName))
            }
        }
        return found
    }

    /// Calls `body` with each object of the type in key order, streaming (never all in memory).
    func forEachObject(_ typeName: String, _ body: (RealmObject) throws -> Void) throws {
        let (t, tt) = try located(typeName)
        let rows = try StoreRow.fetchCursor(db.cachedStatement(sql: tt.selectObjects), arguments: [tables.realmId])
        let keyType = RealmTables.keyType(of: t)
        while let row = try rows.next() {
            let id = RealmTables.decode(db.dialect.storedKey(row[0]), as: keyType)
            try body(try build(t, id) { row[$0 + 1] as StoredValue })
        }
    }

    /// The identity of an object of the type whose `property` holds `value` (the first in key
    /// order if several do), or nil. Indexed for database keys.
    func identity(_ typeName: String, where property: String, equals value: Value) throws -> Value? {
        let (t, tt) = try located(typeName)
        guard let j = t.properties.firstIndex(where: { $0.name == property }),
            case .scalar(let s) = t.properties[j].type
        else {
            throw RealmAdapterError.notASingleValue(type: typeName, property: property)
        }
        guard value.isStorableAsIs else { return nil }
        let sql = "SELECT key FROM \(tt.table) WHERE realm = ? AND \(tt.columns[j]!) = ? ORDER BY key LIMIT 1"
        let coerced = try value.coerced(to: s, optional: false)
        let arguments: StoreArguments = [
            tables.realmId, property == t.primaryKey ? StoreArgument.key(coerced) : .value(coerced),
        ]
        guard let dv = try StoredValue.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) else {
            return nil
        }
        return RealmTables.decode(db.dialect.storedKey(dv), as: RealmTables.keyType(of: t))
    }

    func count(_ typeName: String) throws -> Int {
        let (_, tt) = try located(typeName)
        return try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM \(tt.table) WHERE realm = ?"), arguments: [tables.realmId])
            ?? 0
    }

    func list(_ typeName: String, _ identity: Value, _ property: String) throws -> [Value] {
        let (t, tt) = try located(typeName)
        guard let j = t.properties.firstIndex(where: { $0.name == property }),
            case .list(let element) = t.properties[j].type
        else {
            throw RealmAdapterError.notAList(type: typeName, property: property)
        }
        let s: ScalarType =
            switch element {
            case .scalar(let s): s
            case .link(let target): RealmTables.keyType(of: schema[type: target]!)
            }
        let sql = "SELECT value FROM \(tt.listTables[j]!) WHERE realm = ? AND owner = ? ORDER BY idx"
        let values = try StoredValue.fetchAll(
            db.cachedStatement(sql: sql), arguments: [tables.realmId, StoreArgument.key(identity)])
        if case .link = element { return values.map { RealmTables.decode(db.dialect.storedKey($0), as: s) } }
        return values.map { RealmTables.decode($0, as: s) }
    }

    /// The object from its single-value columns (`column(0)`, … in schema order, as
    /// ``TypeTables/selectObject`` reads them) and its lists.
    func build(_ t: ObjectSchema, _ id: Value, column: (Int) -> StoredValue) throws -> RealmObject {
        var values = PropertyValues()
        var c = 0
        for p in t.properties {
            switch p.type {
            case .scalar(let s):
                let stored = p.name == t.primaryKey ? db.dialect.storedKey(column(c)) : column(c)
                values.append(p.name, RealmTables.decode(stored, as: s))
                c += 1
            case .link(let target):
                let keyType = RealmTables.keyType(of: schema[type: target]!)
                values.append(p.name, RealmTables.decode(db.dialect.storedKey(column(c)), as: keyType))
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
    /// - Parameter access: nil also when its reader may not read it (its ACL checked in the
    ///   same snapshot; fine-grained permissions).
    public func object(
        of type: String, identity: Value, in path: String, readableBy access: RealmAccess = .unrestricted
    ) throws -> RealmObject? {
        // A key no object can have (a string holding NUL) is simply not there.
        guard identity.isStorableAsIs else { return nil }
        return try read { db in
            let r = try reader(db, path)
            guard let o = try r.object(type, try identity.coercedKey(of: type, in: r.schema)) else { return nil }
            if access.aclProperty(of: type) != nil, !(try r.privileges(of: type, o.identity, access)).contains(.read) {
                return nil
            }
            return o
        }
    }

    /// The identity of an object of `type` whose `property` holds `value`, in the Realm at
    /// `path`, or nil (also when there is no such Realm or type).
    public func identity(of type: String, where property: String, equals value: Value, in path: String) throws -> Value?
    {
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

    func reader(_ db: any StoreConnection, _ path: String) throws -> RealmReader {
        let row = try Self.requireRealm(db, path)
        return RealmReader(db: db, tables: RealmTables(realmId: row.id, layout: layout), schema: try schema(db, row))
    }
}
