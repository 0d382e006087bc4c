/// A write transaction on one Realm, handed to the body of ``RealmStore/write(to:origin:sourcePosition:_:)``.
///
/// Each call checks and applies its change at once (later calls and reads see it) and records
/// the matching instruction; the transaction commits when the body returns, or leaves no trace
/// if it throws.
public struct WriteTransaction {
    var writer: RealmWriter
    /// The Realm being written.
    public let path: String
    /// The instructions recorded so far, as they will appear in history (but for prepared
    /// INSERTs and batches, which are kept encoded: ``insert(_:)``, ``apply(_:)``; ``count``
    /// counts them all).
    public private(set) var instructions: [Instruction] = []
    /// Prepared INSERTs stored, encoded, with the index in `instructions` they come before.
    var prepared: [(at: Int, encoded: BinaryWriter, count: Int)] = []

    init(writer: RealmWriter, path: String) {
        self.writer = writer
        self.path = path
    }

    /// The Realm's version when this transaction began (0 for a new Realm): the writes of
    /// others are serialized, so nothing was committed to it between that version and this
    /// transaction.
    public var baseVersion: Int64 { writer.baseVersion }

    /// The schema as of this point in the transaction.
    public var schema: Schema { writer.schema }

    var reader: RealmReader { RealmReader(db: writer.db, tables: writer.tables, schema: writer.schema) }

    /// Applies and records one instruction. Every other method goes through here.
    public mutating func record(_ instruction: Instruction) throws {
        _ = try record(instruction) { try $0.apply(instruction) }
    }

    /// Applies and records `batch` in order, consecutive INSERTs in bulk, as
    /// `RealmStore.apply(_:to:origin:sourcePosition:)` does: for a transaction that arrives in
    /// parts (a large instruction file, streamed). A refusal names the instruction's index in the
    /// whole transaction.
    public mutating func apply(_ batch: [Instruction]) throws {
        let typed = try RealmStore.apply(batch, with: &writer, path: path, firstIndex: count)
        // Kept encoded, as prepared INSERTs are: a streamed transaction holds its history's
        // bytes, not its instructions.
        var encoded = BinaryWriter()
        for i in typed { encoded.instruction(i) }
        prepared.append((instructions.count, encoded, typed.count))
    }

    /// How many instructions are recorded so far, those kept encoded included.
    public var count: Int { prepared.reduce(instructions.count) { $0 + $1.count } }

    /// Records what `apply` makes of `instruction`; false if it applied nothing (nil). A refusal
    /// names the instruction and its place in the transaction.
    private mutating func record(_ instruction: Instruction, _ apply: (inout RealmWriter) throws -> Instruction?)
        throws -> Bool
    {
        do {
            guard let typed = try apply(&writer) else { return false }
            instructions.append(typed)
            return true
        } catch let e as RealmAdapterError {
            throw RealmStore.rejected(e, index: count, instruction: instruction, path: path)
        }
    }

    /// Stores INSERTs checked and encoded ahead (on another thread). Returns false, storing
    /// nothing, if the Realm's type is not the one they were checked against (its schema grew):
    /// record them one by one then.
    public mutating func insert(_ inserts: PreparedInserts) throws -> Bool { try insert(inserts, known: nil) }

    /// The same, with the links' targets looked up in `known` first (a bulk load's).
    mutating func insert(_ inserts: PreparedInserts, known: KnownObjects?) throws -> Bool {
        guard inserts.count > 0 else { return true }
        do {
            guard try writer.insert(inserts, known: known) else { return false }
        } catch let e as RealmAdapterError {
            throw RealmStore.rejected(
                e, index: count,
                instruction: .insert(objectType: inserts.type.name, identity: .null, values: [:]), path: path)
        }
        prepared.append((instructions.count, inserts.encoded, inserts.count))
        return true
    }

    /// Adds a type (ADD_TYPE), or the new properties of `type` to an existing type.
    public mutating func addType(_ type: ObjectSchema) throws { try record(.addType(type)) }

    /// Adds properties to an existing type (ADD_PROPERTIES).
    public mutating func addProperties(_ properties: [Property], to type: String) throws {
        try record(.addProperties(objectType: type, properties: properties))
    }

    /// Creates an object (INSERT) and returns its identity: the primary key from `values`, or a
    /// new row key for a type without a primary key. List properties may be given as `.list`.
    @discardableResult
    public mutating func create(_ type: String, _ values: PropertyValues) throws -> Value {
        guard let t = writer.schema[type: type] else {
            throw RealmStore.rejected(
                RealmAdapterError.unknownType(type), index: count,
                instruction: .insert(objectType: type, identity: .null, values: values), path: path)
        }
        let identity: Value
        if let pk = t.primaryKey {
            guard let v = values[pk] else {
                throw RealmStore.rejected(
                    RealmAdapterError.requiredValueMissing(type: type, property: pk), index: count,
                    instruction: .insert(objectType: type, identity: .null, values: values), path: path)
            }
            identity = v
        } else {
            identity = .int(try writer.newRowKey(for: type))
        }
        try record(.insert(objectType: type, identity: identity, values: values))
        return try identity.coercedKey(of: type, in: writer.schema)
    }

    /// Updates an object, recording a SET of only the properties whose value changes (nothing
    /// if none does).
    public mutating func update(_ type: String, _ identity: Value, _ values: PropertyValues) throws {
        if try !update(type, identity, values, creating: false) {
            throw RealmStore.rejected(
                writer.schema[type: type].map { RealmAdapterError.objectNotFound($0, identity) }
                    ?? RealmAdapterError.unknownType(type),
                index: count,
                instruction: .set(objectType: type, identity: identity, values: values), path: path)
        }
    }

    /// Creates the object, or updates the properties of the existing one that change.
    public mutating func upsert(_ type: String, _ identity: Value, _ values: PropertyValues) throws {
        if upsertsCreate {
            if try createIfAbsent(type, identity, values) { return }
            upsertsCreate = false
        }
        if try !update(type, identity, values, creating: true) {
            try create(type, values)
            upsertsCreate = true
        }
    }

    /// Upserts of one type, with distinct keys, as ``upsert(_:_:_:)`` one by one would apply
    /// them: the objects that exist are looked up many at a time and updated, the others created
    /// by runs of INSERTs (many rows per statement, as ``apply(_:)`` stores them). On a store
    /// across a network, a round trip per upsert was most of what a database's backlog cost.
    public mutating func upsert(_ type: String, each run: [(identity: Value, values: PropertyValues)]) throws {
        guard let keys = distinctKeys(type, run) else {
            for u in run { try upsert(type, u.identity, u.values) }
            return
        }
        let existing = try reader.existingKeys(type, among: keys)
        var absent: [Instruction] = []
        for (u, key) in zip(run, keys) {
            guard existing.contains(key) else {
                absent.append(.insert(objectType: type, identity: u.identity, values: u.values))
                continue
            }
            if !absent.isEmpty { try apply(absent) }
            absent = []
            if try !update(type, u.identity, u.values, creating: true) { try create(type, u.values) }
        }
        if !absent.isEmpty { try apply(absent) }
    }

    /// The run's keys as stored, if each upsert names its key among its values and no two name
    /// the same object (or nil: the run goes one by one, with one by one's errors).
    private func distinctKeys(_ type: String, _ run: [(identity: Value, values: PropertyValues)]) -> [Value]? {
        guard let pk = writer.schema[type: type]?.primaryKey else { return nil }
        var keys: [Value] = []
        for u in run {
            guard u.values[pk] == u.identity, let key = try? u.identity.coercedKey(of: type, in: writer.schema)
            else { return nil }
            keys.append(key)
        }
        return Set(keys).count == keys.count ? keys : nil
    }

    /// Whether the last upsert created its object. Upserts come in runs (a database's inserts,
    /// then its updates): after one that created, the next tries its INSERT before reading the
    /// object, which a new object does not need; after one that updated, it reads first. Either
    /// way the outcome is the same.
    private var upsertsCreate = false

    /// Creates the object of an upsert if no object has its key and its INSERT applies as it is;
    /// false, having written nothing, otherwise.
    private mutating func createIfAbsent(_ type: String, _ identity: Value, _ values: PropertyValues) throws -> Bool {
        guard let pk = writer.schema[type: type]?.primaryKey, let key = values[pk], key == identity else {
            return false
        }
        return try record(.insert(objectType: type, identity: key, values: values)) {
            try $0.insert(type, key, values, ifAbsent: true)
        }
    }

    /// Records a SET of the values that change, reading the object once; false if it does not exist.
    private mutating func update(_ type: String, _ identity: Value, _ values: PropertyValues, creating: Bool) throws
        -> Bool
    {
        let probe = Instruction.set(objectType: type, identity: identity, values: values)
        let typed: Instruction
        do { typed = try probe.coerced(in: writer.schema) } catch let e as RealmAdapterError {
            // An object to create is checked by its INSERT (which knows its defaults and lists).
            if creating, try reader.object(type, try identity.coercedKey(of: type, in: writer.schema)) == nil {
                return false
            }
            throw RealmStore.rejected(e, index: count, instruction: probe, path: path)
        }
        guard case .set(_, let id, let newValues) = typed else { return true }
        guard let current = try reader.object(type, id) else { return false }
        let changed = PropertyValues(newValues.filter { current.values[$0.name] != $0.value })
        if !changed.isEmpty { try record(.set(objectType: type, identity: id, values: changed)) }
        return true
    }

    public mutating func delete(_ type: String, _ identity: Value) throws {
        try record(.delete(objectType: type, identity: identity))
    }

    /// Deletes every object of `type` (CLEAR).
    public mutating func deleteAll(_ type: String) throws { try record(.clear(objectType: type)) }

    public mutating func listInsert(
        _ type: String, _ identity: Value, _ property: String, at index: Int, _ value: Value
    ) throws {
        try record(.listInsert(objectType: type, identity: identity, property: property, index: index, value: value))
    }

    public mutating func listAppend(_ type: String, _ identity: Value, _ property: String, _ value: Value) throws {
        let count = try list(type, identity, property).count
        try listInsert(type, identity, property, at: count, value)
    }

    /// Appends `items` to a list: a LIST_INSERT each, at its end, with the owner and the list
    /// looked up once.
    public mutating func listAppend(_ type: String, _ identity: Value, _ property: String, contentsOf items: [Value])
        throws
    {
        try appendToLists(type, property, [.init(owner: identity, items: items)])
    }

    /// Appends to lists `property` of objects of `type`: a LIST_INSERT per item, at its list's
    /// end, many rows per statement. With `targetsChecked`, the caller has found every target in
    /// this transaction (a loader, which decides what a missing one means).
    mutating func appendToLists(
        _ type: String, _ property: String, _ lists: [RealmWriter.ListAppend], targetsChecked: Bool = false
    ) throws {
        let start = instructions.count
        do {
            try writer.appendToLists(type, property, lists, targetsChecked: targetsChecked, into: &instructions)
        } catch let e as RealmAdapterError {
            // The items before the failing one are in their lists (until the transaction rolls back).
            var before = instructions.count - start
            for list in lists where !list.items.isEmpty {
                guard before >= list.items.count else {
                    let index = (try? self.list(type, list.owner, property).count) ?? 0
                    throw RealmStore.rejected(
                        e, index: count,
                        instruction: .listInsert(
                            objectType: type, identity: list.owner, property: property, index: index,
                            value: list.items[before]),
                        path: path)
                }
                before -= list.items.count
            }
            throw e
        }
    }

    public mutating func listSet(_ type: String, _ identity: Value, _ property: String, at index: Int, _ value: Value)
        throws
    {
        try record(.listSet(objectType: type, identity: identity, property: property, index: index, value: value))
    }

    public mutating func listErase(_ type: String, _ identity: Value, _ property: String, at index: Int) throws {
        try record(.listErase(objectType: type, identity: identity, property: property, index: index))
    }

    public mutating func listClear(_ type: String, _ identity: Value, _ property: String) throws {
        try record(.listClear(objectType: type, identity: identity, property: property))
    }

    /// Moves an object of a type without a primary key to a new row key (CHANGE_IDENTITY).
    public mutating func changeIdentity(_ type: String, _ identity: Value, to newIdentity: Value) throws {
        try record(.changeIdentity(objectType: type, identity: identity, newIdentity: newIdentity))
    }

    /// Reads an object as this transaction sees it.
    public func object(_ type: String, _ identity: Value) throws -> RealmObject? {
        try reader.object(type, try identity.coercedKey(of: type, in: writer.schema))
    }

    /// The identity of an object whose `property` holds `value`, as this transaction sees it
    /// (nil also when the Realm has no such type yet).
    public func identity(of type: String, where property: String, equals value: Value) throws -> Value? {
        guard writer.schema[type: type] != nil else { return nil }
        return try reader.identity(type, where: property, equals: value)
    }

    /// Reads a list as this transaction sees it.
    public func list(_ type: String, _ identity: Value, _ property: String) throws -> [Value] {
        try reader.list(type, try identity.coercedKey(of: type, in: writer.schema), property)
    }
}
