/// Applies coerced instructions to one Realm's tables inside an open SQLite write transaction.
///
/// Every check that makes a transaction invalid happens here or in coercion, and throws before
/// the transaction commits, so nothing is ever partly applied. SQL is built once per table and
/// kept in SQLite's statement cache.
struct RealmWriter {
    let db: any StoreConnection
    let tables: RealmTables
    private(set) var schema: Schema
    private(set) var schemaChanged = false
    private var insertPlans: [String: InsertPlan] = [:]
    /// Bulk loads insert one type many times in a row: skip the dictionary then.
    private var lastPlan: (String, InsertPlan)?
    /// Next row key per type without a primary key.
    private var nextRowKey: [String: Int64] = [:]

    /// The Realm's version when the transaction began.
    let baseVersion: Int64
    /// Where this transaction records objects' before-images, or nil when no adapter that wants
    /// change sets follows the Realm (``recordBefore(_:_:)``).
    var recording: ChangeRecorder?

    init(db: any StoreConnection, tables: RealmTables, schema: Schema, baseVersion: Int64 = 0) {
        self.db = db
        self.baseVersion = baseVersion
        self.tables = tables
        self.schema = schema
    }

    /// The Realm's id: the first column of every table row it has (``StoreLayout``).
    var realm: Int64 { tables.realmId }

    // MARK: Names

    func type(_ name: String) throws -> (ObjectSchema, TypeTables) {
        guard let t = schema[type: name] else {
            throw RealmAdapterError.unknownType(name)
        }
        return (t, try tables.of(t, db: db))
    }

    func propertyOrdinal(_ t: ObjectSchema, _ name: String) -> Int {
        t.properties.firstIndex { $0.name == name }!
    }

    func listTable(_ t: ObjectSchema, _ property: String) throws -> String {
        try tables.of(t, db: db).listTables[propertyOrdinal(t, property)]!
    }

    // MARK: Apply

    /// Checks one instruction against the schema, applies it, and returns it with every value
    /// converted to its property's type (the form history records).
    mutating func apply(_ instruction: Instruction) throws -> Instruction {
        // INSERT is the bulk of every load: it checks and converts its values in one pass.
        if case .insert(let n, let id, let values) = instruction { return try insert(n, id, values) }
        let typed = try instruction.coerced(in: schema)
        try applyTyped(typed)
        return typed
    }

    private mutating func applyTyped(_ instruction: Instruction) throws {
        switch instruction {
        case .addType(let t):
            try changeSchema(try schema.adding(t, validate: false), touching: t.name)
        case .addProperties(let name, let props):
            try changeSchema(try schema.adding(properties: props, to: name, validate: false), touching: name)
        case .insert:
            preconditionFailure("INSERT is applied by insert(_:_:_:)")
        case .set(let n, let id, let values):
            try set(n, id, values)
        case .delete(let n, let id):
            let (t, tt) = try type(n)
            try recordBefore(t, id)
            try removeIncomingLinks(to: t, key: id)
            try deleteLists(of: t, owner: id)
            try db.cachedStatement(sql: "DELETE FROM \(tt.table) WHERE realm = ? AND key = ?").execute(arguments: [
                realm, StoreArgument.key(id),
            ])
            guard db.changesCount == 1 else { throw missing(t, id) }
        case .clear(let n):
            let (t, tt) = try type(n)
            try recordBefore(t, keysFrom: "SELECT key FROM \(tt.table) WHERE realm = ?", [realm])
            try removeIncomingLinks(to: t, key: nil)
            try deleteLists(of: t, owner: nil)
            try db.cachedStatement(sql: "DELETE FROM \(tt.table) WHERE realm = ?").execute(arguments: [realm])
        case .listInsert(let n, let id, let p, let i, let v):
            let (t, lt, count) = try list(n, id, p)
            guard i <= count else { throw outOfRange(t, p, i, count, inserting: true) }
            try checkElement(t, p, v)
            if i < count {
                try db.cachedStatement(sql: "UPDATE \(lt) SET idx = idx + 1 WHERE realm = ? AND owner = ? AND idx >= ?")
                    .execute(arguments: [realm, StoreArgument.key(id), i])
            }
            try db.cachedStatement(sql: "INSERT INTO \(lt) (realm, owner, idx, value) VALUES (?, ?, ?, ?)").execute(
                arguments: [realm, StoreArgument.key(id), i, Self.element(v, of: t, p)])
        case .listSet(let n, let id, let p, let i, let v):
            let (t, lt, count) = try list(n, id, p)
            guard i < count else { throw outOfRange(t, p, i, count, inserting: false) }
            try checkElement(t, p, v)
            try db.cachedStatement(sql: "UPDATE \(lt) SET value = ? WHERE realm = ? AND owner = ? AND idx = ?").execute(
                arguments: [Self.element(v, of: t, p), realm, StoreArgument.key(id), i])
        case .listErase(let n, let id, let p, let i):
            let (t, lt, count) = try list(n, id, p)
            guard i < count else { throw outOfRange(t, p, i, count, inserting: false) }
            let o = StoreArgument.key(id)
            try db.cachedStatement(sql: "DELETE FROM \(lt) WHERE realm = ? AND owner = ? AND idx = ?").execute(
                arguments: [realm, o, i])
            try db.cachedStatement(sql: "UPDATE \(lt) SET idx = idx - 1 WHERE realm = ? AND owner = ? AND idx > ?")
                .execute(arguments: [realm, o, i])
        case .listClear(let n, let id, let p):
            let (_, lt, _) = try list(n, id, p)
            try db.cachedStatement(sql: "DELETE FROM \(lt) WHERE realm = ? AND owner = ?").execute(arguments: [
                realm, StoreArgument.key(id),
            ])
        case .changeIdentity(let n, let old, let new):
            let (t, tt) = try type(n)
            let o = StoreArgument.key(old)
            let nw = StoreArgument.key(new)
            guard try !exists(tt, new) else {
                throw RealmAdapterError.duplicateKey(t, new)
            }
            try recordBefore(t, old)
            try recordCreated(t, new)
            try db.cachedStatement(sql: "UPDATE \(tt.table) SET key = ? WHERE realm = ? AND key = ?").execute(
                arguments: [nw, realm, o])
            guard db.changesCount == 1 else { throw missing(t, old) }
            for lt in tt.listTables.compactMap({ $0 }) {
                try db.cachedStatement(sql: "UPDATE \(lt) SET owner = ? WHERE realm = ? AND owner = ?").execute(
                    arguments: [nw, realm, o])
            }
            try forEachIncomingLink(to: t) { u, table, column, isList in
                let owner = isList ? "owner" : "key"
                try recordBefore(
                    u, keysFrom: "SELECT DISTINCT \(owner) FROM \(table) WHERE realm = ? AND \(column) = ?", [realm, o])
                try db.cachedStatement(sql: "UPDATE \(table) SET \(column) = ? WHERE realm = ? AND \(column) = ?")
                    .execute(arguments: [nw, realm, o])
            }
        }
    }

    /// A fresh row key for a new object of a type without a primary key.
    mutating func newRowKey(for typeName: String) throws -> Int64 {
        if let k = nextRowKey[typeName] {
            nextRowKey[typeName] = k + 1
            return k
        }
        let (_, tt) = try type(typeName)
        // The largest key, read as a key (a backend may keep keys in a form of its own).
        let last = try StoredValue.fetchOne(
            db.cachedStatement(sql: "SELECT key FROM \(tt.table) WHERE realm = ? ORDER BY key DESC LIMIT 1"),
            arguments: [realm])
        let k = last.flatMap { Int64.fromStored(db.dialect.storedKey($0)) }.map { $0 + 1 } ?? 0
        nextRowKey[typeName] = k + 1
        return k
    }

    private mutating func changeSchema(_ new: Schema, touching name: String) throws {
        let old = schema
        schema = new
        let isNew = old[type: name] == nil
        let t = new[type: name]!
        let first = old[type: name]?.properties.count ?? 0
        if isNew || first < t.properties.count {
            try tables.layout.prepare(t, fromProperty: first, isNew: isNew, realmId: realm, schema: new, db: db)
            schemaChanged = true
            insertPlans[name] = nil
            lastPlan = nil
        }
    }

    /// How to insert objects of one type: the checks (``InsertTyping``) and the statement, built
    /// once per type and transaction. A class, so that using it per row costs one retain.
    final class InsertPlan: @unchecked Sendable {
        // @unchecked: used only on the store's writer connection, one transaction at a time.
        let typing: InsertTyping
        /// Held for the whole transaction: looking it up by SQL text per row costs a string hash.
        let statement: any StoreStatement
        let table: String
        let columns: [String]
        /// Per column after `realm`: whether it holds keys (the object's key, a link), which
        /// are bound as keys (``StoreStatement/bind(key:at:)``).
        let keys: [Bool]
        /// The connection the statements were prepared on (``StoreConnection/lifetime``).
        weak var connection: AnyObject?

        init(
            typing: InsertTyping, statement: any StoreStatement, table: String, columns: [String], keys: [Bool],
            connection: AnyObject
        ) {
            self.typing = typing
            self.statement = statement
            self.connection = connection
            self.table = table
            self.columns = columns
            self.keys = keys
        }

        /// Binds `value` to parameter `index` for column `column` (counted after `realm`).
        func bind(_ value: Value, column: Int, to stmt: any StoreStatement, at index: Int32) throws {
            if keys[column] { try stmt.bind(key: value, at: index) } else { try stmt.bind(value, at: index) }
        }

        private var multiRow: [Int: any StoreStatement] = [:]

        /// The INSERT of `rows` rows at once, kept: its SQL text costs more to build than a row to store.
        /// A few dozen lengths at most (a run's last statement may have any): past them, it starts again.
        func statement(rows: Int, db: any StoreConnection) throws -> any StoreStatement {
            if let s = multiRow[rows] { return s }
            if multiRow.count >= 64 { multiRow.removeAll() }
            let s = try db.cachedStatement(sql: Self.sql(table, columns, rows: rows))
            multiRow[rows] = s
            return s
        }

        static func sql(_ table: String, _ columns: [String], rows: Int) -> String {
            let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
                + Array(repeating: row, count: rows).joined(separator: ", ")
        }
    }

    mutating func plan(_ n: String) throws -> InsertPlan {
        if let (name, p) = lastPlan, name == n { return p }
        if let p = insertPlans[n] {
            lastPlan = (n, p)
            return p
        }
        let (t, tt) = try type(n)
        // Types without links insert alike in every Realm that has them: one plan for all.
        let shareable = !t.properties.contains { $0.type.linkTarget != nil }
        if shareable, let p = tables.layout.insertPlan(for: t, on: db.lifetime) {
            insertPlans[n] = p
            lastPlan = (n, p)
            return p
        }
        let typing = try InsertTyping(t, schema: schema)
        var columns = ["realm"] + (t.primaryKey == nil ? [TypeTables.key] : [])
        var keys = t.primaryKey == nil ? [true] : []
        for (j, p) in t.properties.enumerated() where typing.slots[p.name] != nil {
            columns.append(tt.columns[j]!)
            keys.append(p.name == t.primaryKey || p.type.linkTarget != nil)
        }
        let p = InsertPlan(
            typing: typing, statement: try db.cachedStatement(sql: InsertPlan.sql(tt.table, columns, rows: 1)),
            table: tt.table, columns: columns, keys: keys, connection: db.lifetime)
        insertPlans[n] = p
        lastPlan = (n, p)
        if shareable { tables.layout.keep(p, for: t) }
        return p
    }

    mutating func insert(_ n: String, _ rawId: Value, _ values: PropertyValues) throws -> Instruction {
        try insert(n, rawId, values, ifAbsent: false)!
    }

    /// INSERT, or with `ifAbsent`, nil having written nothing if it cannot be applied as it is
    /// (an object with the key exists, or a value or a link fails its check): an upsert then
    /// reads the object and decides. A database error, and what fails after the row is
    /// written, throw either way.
    mutating func insert(_ n: String, _ rawId: Value, _ values: PropertyValues, ifAbsent: Bool) throws
        -> Instruction?
    {
        let plan = try plan(n)
        let typing = plan.typing
        defer { typing.clearRow() }
        let stmt = plan.statement
        let id: Value
        let typed: PropertyValues
        let lists: [(Property, [Value])]
        do {
            (id, typed, lists) = try typing.check(n, rawId, values, schema: schema)
            stmt.reset()
            stmt.bind(realm, at: 1)
            if typing.rowKeyOffset == 1 { try stmt.bind(key: id, at: 2) }
            for k in typing.row.indices {
                let value = typing.row[k]!
                if let target = typing.slotTargets[k], !value.isNull, target != n || value != id {
                    try checkTarget(target, value, from: typing.type, typing.slotProperties[k])
                }
                try plan.bind(value, column: k + typing.rowKeyOffset, to: stmt, at: Int32(k + 2 + typing.rowKeyOffset))
            }
            try Self.run(stmt, id, typing.type)
        } catch is RealmAdapterError where ifAbsent {
            return nil
        }
        if recording != nil { try recordCreated(typing.type, id) }
        for (p, items) in lists { try fillList(typing.type, p, owner: id, items) }
        return .insert(objectType: n, identity: id, values: typed)
    }

    /// Runs the bound INSERT; a constraint error is a duplicate key (`id`) of type `t`.
    static func run(_ stmt: any StoreStatement, _ id: @autoclosure () -> Value, _ t: ObjectSchema) throws {
        do {
            try stmt.run()
        } catch let e as StoreError where e.isConstraint {
            let id = id()
            throw RealmAdapterError.duplicateKey(t, id)
        }
    }

    /// SET: the single values in one UPDATE, whose count of rows says whether the object
    /// exists (on a store across a network, a statement per property and a lookup first were a
    /// round trip each). A list, or changes being recorded, needs the object first; where a value
    /// is refused, a missing object is still what is named, as when it was looked up first.
    private mutating func set(_ n: String, _ id: Value, _ values: PropertyValues) throws {
        let (t, tt) = try type(n)
        let key = StoreArgument.key(id)
        let lookedUp = recording != nil || values.contains { if case .list = $0.value { true } else { false } }
        if lookedUp {
            guard try exists(tt, id) else { throw missing(t, id) }
            try recordBefore(t, id)
        }
        // By property, in schema order; a property named twice keeps its last value, as one
        // UPDATE each did.
        var assignments: [(ordinal: Int, value: StoreArgument)] = []
        do {
            for e in values {
                let j = propertyOrdinal(t, e.name)
                let p = t.properties[j]
                if p.name == t.primaryKey {
                    guard e.value == id else {
                        throw RealmAdapterError.primaryKeyIsFixed(type: n, property: p.name)
                    }
                    continue
                }
                if case .list(let items) = e.value {
                    try db.cachedStatement(sql: "DELETE FROM \(tt.listTables[j]!) WHERE realm = ? AND owner = ?")
                        .execute(arguments: [realm, key])
                    try fillList(t, p, owner: id, items)
                    continue
                }
                if case .link(let target) = p.type, !e.value.isNull { try checkTarget(target, e.value, from: t, p) }
                let value = p.type.linkTarget == nil ? StoreArgument.value(e.value) : .key(e.value)
                if let k = assignments.firstIndex(where: { $0.ordinal == j }) {
                    assignments[k].value = value
                } else {
                    assignments.append((j, value))
                }
            }
        } catch let e as RealmAdapterError where !lookedUp {
            guard try exists(tt, id) else { throw missing(t, id) }
            throw e
        }
        guard !assignments.isEmpty else {
            guard try lookedUp || exists(tt, id) else { throw missing(t, id) }
            return
        }
        assignments.sort { $0.ordinal < $1.ordinal }
        let columns = assignments.map { "\(tt.columns[$0.ordinal]!) = ?" }.joined(separator: ", ")
        let sql = "UPDATE \(tt.table) SET \(columns) WHERE realm = ? AND key = ?"
        // Kept for reuse where the ways to pick the columns stay as few as the columns (one of
        // them, or all): updates may change any subset of a wide type's properties.
        let settable = tt.columns.count(where: { $0 != nil }) - (t.primaryKey == nil ? 0 : 1)
        let reused = assignments.count == 1 || assignments.count == settable
        try (reused ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql))
            .execute(arguments: StoreArguments(assignments.map(\.value) + [realm.storeArgument, key]))
        guard lookedUp || db.changesCount == 1 else { throw missing(t, id) }
    }

    private func fillList(_ t: ObjectSchema, _ p: Property, owner: Value, _ items: [Value]) throws {
        let stmt = try db.cachedStatement(
            sql: "INSERT INTO \(try listTable(t, p.name)) (realm, owner, idx, value) VALUES (?, ?, ?, ?)")
        for (i, v) in items.enumerated() {
            try checkElement(t, p.name, v)
            try stmt.execute(arguments: [realm, StoreArgument.key(owner), i, Self.element(v, of: t, p.name)])
        }
    }

    // MARK: Checks

    /// The owner's type, its list's table and the list's length; throws if there is no such owner.
    func list(_ n: String, _ id: Value, _ p: String) throws -> (ObjectSchema, String, Int) {
        let (t, tt) = try type(n)
        let lt = try listTable(t, p)
        // One statement: a bulk load asks this of every owner.
        let count = try db.cachedStatement(
            sql: """
                SELECT (SELECT count(*) FROM \(lt) WHERE realm = ?1 AND owner = ?2)
                WHERE EXISTS (SELECT 1 FROM \(tt.table) WHERE realm = ?1 AND key = ?2)
                """
        ).firstInteger([realm, StoreArgument.key(id)])
        guard let count else { throw missing(t, id) }
        try recordBefore(t, id)
        return (t, lt, Int(count))
    }

    /// An element of list `property` as bound: a key for a list of links.
    static func element(_ v: Value, of t: ObjectSchema, _ property: String) -> StoreArgument {
        t[property: property]?.type.linkTarget == nil ? .value(v) : .key(v)
    }

    func checkElement(_ t: ObjectSchema, _ property: String, _ v: Value) throws {
        if case .list(.link(let target)) = t[property: property]!.type {
            try checkTarget(target, v, from: t, t[property: property]!)
        }
    }

    /// Refuses a link to an object the Realm does not have. (An object being inserted may link
    /// to itself: its INSERT passes the link over when it is its own identity.)
    func checkTarget(_ target: String, _ v: Value, from t: ObjectSchema, _ p: Property) throws {
        let (_, tt) = try type(target)
        guard try exists(tt, v) else {
            throw RealmAdapterError.linkTargetMissing(
                type: t.name, property: p.name, target: target, kind: v.kindName)
        }
    }

    /// Whether the Realm has an object with this key (a primary key or row key) in the type's table.
    func exists(_ tt: TypeTables, _ key: Value) throws -> Bool {
        try db.cachedStatement(sql: tt.selectExists).firstInteger([realm, StoreArgument.key(key)]) != nil
    }

    private func missing(_ t: ObjectSchema, _ id: Value) -> RealmAdapterError {
        RealmAdapterError.objectNotFound(t, id)
    }

    private func outOfRange(_ t: ObjectSchema, _ p: String, _ i: Int, _ count: Int, inserting: Bool)
        -> RealmAdapterError
    {
        RealmAdapterError.listIndexOutOfRange(type: t.name, property: p, index: i, count: count, inserting: inserting)
    }

    // MARK: Links into a deleted object

    /// Calls `body(type, table, column, isList)` for every stored link (column or link-list
    /// table) to type `t`, with the type that holds it.
    private func forEachIncomingLink(
        to t: ObjectSchema, _ body: (ObjectSchema, String, String, Bool) throws -> Void
    ) throws {
        for u in schema.types where u.properties.contains(where: { $0.type.linkTarget == t.name }) {
            let ut = try tables.of(u, db: db)
            for (j, p) in u.properties.enumerated() where p.type.linkTarget == t.name {
                if p.type.isList {
                    try body(u, ut.listTables[j]!, "value", true)
                } else {
                    try body(u, ut.table, ut.columns[j]!, false)
                }
            }
        }
    }

    /// As in Realm: links to a deleted object become null, and it leaves every list it was in
    /// (later elements move up so indexes stay contiguous). `key == nil` means all objects of `t`.
    private func removeIncomingLinks(to t: ObjectSchema, key: Value?) throws {
        let k = key.map(StoreArgument.key)
        try forEachIncomingLink(to: t) { u, table, column, isList in
            let owner = isList ? "owner" : "key"
            if let k {
                try recordBefore(
                    u, keysFrom: "SELECT DISTINCT \(owner) FROM \(table) WHERE realm = ? AND \(column) = ?", [realm, k])
            } else {
                try recordBefore(
                    u, keysFrom: "SELECT DISTINCT \(owner) FROM \(table) WHERE realm = ? AND \(column) IS NOT NULL",
                    [realm])
            }
            if !isList {
                if let k {
                    try db.cachedStatement(
                        sql: "UPDATE \(table) SET \(column) = NULL WHERE realm = ? AND \(column) = ?"
                    ).execute(arguments: [realm, k])
                } else {
                    try db.cachedStatement(
                        sql: "UPDATE \(table) SET \(column) = NULL WHERE realm = ? AND \(column) IS NOT NULL"
                    ).execute(arguments: [realm])
                }
                return
            }
            guard let k else {
                try db.cachedStatement(sql: "DELETE FROM \(table) WHERE realm = ?").execute(arguments: [realm])
                return
            }
            // Renumber each affected list: its remaining elements keep their order.
            let owners = try StoredValue.fetchAll(
                db.cachedStatement(sql: "SELECT DISTINCT owner FROM \(table) WHERE realm = ? AND value = ?"),
                arguments: [realm, k])
            guard !owners.isEmpty else { return }
            try db.cachedStatement(sql: "DELETE FROM \(table) WHERE realm = ? AND value = ?").execute(arguments: [
                realm, k,
            ])
            // Positions from the list as it stands before the statement (a window's rows are
            // computed whole, first), so an element renumbered early is not counted again.
            let renumber = try db.cachedStatement(
                sql: """
                    UPDATE \(table) SET idx = n.pos
                    FROM (SELECT idx AS old, row_number() OVER (ORDER BY idx) - 1 AS pos FROM \(table)
                          WHERE realm = ?1 AND owner = ?2) AS n
                    WHERE \(table).realm = ?1 AND \(table).owner = ?2 AND \(table).idx = n.old AND n.pos <> n.old
                    """)
            for o in owners { try renumber.execute(arguments: [realm, o]) }
        }
    }

    private func deleteLists(of t: ObjectSchema, owner: Value?) throws {
        for lt in try tables.of(t, db: db).listTables.compactMap({ $0 }) {
            if let owner {
                try db.cachedStatement(sql: "DELETE FROM \(lt) WHERE realm = ? AND owner = ?").execute(arguments: [
                    realm, StoreArgument.key(owner),
                ])
            } else {
                try db.cachedStatement(sql: "DELETE FROM \(lt) WHERE realm = ?").execute(arguments: [realm])
            }
        }
    }
}
