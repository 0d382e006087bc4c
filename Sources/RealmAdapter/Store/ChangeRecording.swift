import Foundation

/// What change sets are computed from: each object as it was before a transaction touched it.
///
/// While an adapter that asked for it (``Adapter/init(store:name:pathRegex:recordsChanges:compactionInterval:logger:)``)
/// follows a Realm, every transaction on that Realm records in `object_change`, for each object
/// it touches, the object's values before the transaction (on its first touch only), or NULL
/// when the object did not exist (an INSERT, the new key of a CHANGE_IDENTITY). Objects touched
/// indirectly count too: the links nulled by a DELETE, the lists an object leaves.
///
/// From these rows alone, an object's state at the end of version `v` is the first row after
/// `v` (its `before`), or, if there is none, the object as it is now: ``RealmSnapshot``. Rows go
/// with history: compaction removes both up to the lowest cursor, so nothing a follower still
/// needs is removed. Realms no such adapter follows record nothing and pay nothing.
extension RealmStore {
    /// Whether an adapter wants changes recorded (an event handler or webhook follows Realms).
    public func recordsChanges() throws -> Bool { try read { db in try !changeRecordingFilters(db).isEmpty } }

    /// The path filters of the adapters that want changes recorded, read inside the write
    /// transaction (another process may have registered one since): none, the common case,
    /// costs one query per commit.
    func changeRecordingFilters(_ db: any StoreConnection) throws -> [PathFilter] {
        let patterns = try String.fetchAll(
            db.cachedStatement(sql: "SELECT DISTINCT path_regex FROM adapter WHERE records_changes <> 0"))
        guard !patterns.isEmpty else { return [] }
        return pathFilters.withLock { cache in
            patterns.compactMap { p in
                if let f = cache[p] { return f }
                let f = try? PathFilter(p)
                cache[p] = .some(f)
                return f
            }
        }
    }

    /// The object encoded as `object_change.before` keeps it: one INSERT instruction.
    static func image(_ object: RealmObject) -> Data {
        let insert = Instruction.insert(objectType: object.objectType, identity: object.identity, values: object.values)
        return Data(InstructionCodec.encode([insert]))
    }

    static func object(fromImage data: Data) throws -> RealmObject {
        guard case .insert(let type, let identity, let values)? = try InstructionCodec.decode([UInt8](data)).first
        else {
            throw BinaryReader.corrupt
        }
        return RealmObject(objectType: type, identity: identity, values: values)
    }
}

extension RealmWriter {
    /// Records that the object `id` of `t` did not exist before this transaction (a row an
    /// earlier touch in it wrote stays).
    func recordCreated(_ t: ObjectSchema, _ id: Value) throws {
        guard let version = recording?.version else { return }
        try db.cachedStatement(
            sql: """
                INSERT INTO object_change (realm_id, type, key, version, before) VALUES (?, ?, ?, ?, NULL)
                ON CONFLICT DO NOTHING
                """
        ).execute(arguments: [realm, t.name, StoreArgument.key(id), version])
    }

    /// Records the object `id` of `t` as it is now, before this transaction changes it, unless
    /// this transaction recorded it already (or created it: the row saying so stays).
    func recordBefore(_ t: ObjectSchema, _ id: Value) throws {
        guard let recording else { return }
        guard recording.keys.insert(ChangeRecorder.Key(type: t.name, key: id)).inserted else { return }
        let object = try RealmReader(db: db, tables: tables, schema: schema).object(t.name, id)
        try db.cachedStatement(
            sql: """
                INSERT INTO object_change (realm_id, type, key, version, before) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """
        ).execute(arguments: [realm, t.name, StoreArgument.key(id), recording.version, object.map(RealmStore.image)])
    }

    /// ``recordBefore(_:_:)`` for each key that `sql` selects (its first column).
    func recordBefore(_ t: ObjectSchema, keysFrom sql: String, _ arguments: StoreArguments) throws {
        guard recording != nil else { return }
        let keyType = RealmTables.keyType(of: t)
        for k in try StoredValue.fetchAll(db.cachedStatement(sql: sql), arguments: arguments) {
            try recordBefore(t, RealmTables.decode(db.dialect.storedKey(k), as: keyType))
        }
    }

    /// ``recordCreated(_:_:)`` for each object of prepared INSERT records (``PreparedInserts``).
    func recordCreated(_ t: ObjectSchema, records: UnsafeRawBufferPointer, count: Int) throws {
        guard recording != nil else { return }
        var r = BinaryReader(buffer: records)
        for _ in 0..<count {
            guard try r.byte() == 1 else { throw BinaryReader.corrupt }
            try r.skipString()
            let id = try r.value()
            let width = try r.varint()
            let named = try r.byte() == 0
            for _ in 0..<width {
                if named { try r.skipString() }
                try r.skipValue()
            }
            try recordCreated(t, id)
        }
    }
}

/// One transaction's recording: the version it records under, and the objects it has recorded
/// (a class: the writer's checks record too, and they do not mutate the writer).
final class ChangeRecorder {
    struct Key: Hashable {
        var type: String
        var key: Value
    }
    let version: Int64
    var keys = Set<Key>()

    init(version: Int64) { self.version = version }
}
