/// What the Realm has written that the database does not hold yet, as of one point in the
/// database's commit order: the input of the convergence rule.
///
/// **The rule: the database's commit order decides.** For every property, the value written
/// last in the database's commit order wins on both sides. A Realm transaction reaches the
/// database's order when the Realm → database direction commits it, so a database change that
/// commits *before* it must not overwrite, in the Realm, what that Realm transaction will
/// overwrite in the database a moment later. The database → Realm direction therefore leaves
/// out of each database change the properties (and objects) that pending Realm writes touch:
/// - a property set by a pending Realm write takes that write's value (the Realm's own value
///   while the object exists; and the value the database will end with if a database change
///   re-creates an object the Realm had deleted meanwhile);
/// - an object created or deleted by a pending Realm write keeps its Realm state;
/// - a database delete of an object otherwise applies (an update in the Realm after it hits no
///   row in the database, so both sides end without the object).
/// A pending Realm write that the database turns out not to take (its update or delete found no
/// row: ``DatabaseTransaction/missedRows``) is followed, at its place in the commit order, by
/// the row as the database has it. Once writes stop, both sides hold the same values.
public struct PendingWrites: Sendable {
    struct ObjectKey: Hashable {
        var type: String
        var identity: Value
    }
    struct PropertyKey: Hashable {
        var type: String
        var identity: Value
        var property: String
    }

    /// The last value pending writes give each property (nil for list edits, which carry no final value).
    var properties: [PropertyKey: Value?] = [:]
    var created: Set<ObjectKey> = []
    var deleted: Set<ObjectKey> = []
    var clearedTypes: Set<String> = []

    public static let none = PendingWrites()

    public var isEmpty: Bool { properties.isEmpty && created.isEmpty && deleted.isEmpty && clearedTypes.isEmpty }

    /// The writes of these Realm transactions.
    public init(_ transactions: [RealmTransaction] = []) {
        for tx in transactions {
            for i in tx.instructions {
                switch i {
                case .insert(let t, let id, _): created.insert(ObjectKey(type: t, identity: id))
                case .set(let t, let id, let values):
                    for e in values {
                        properties[PropertyKey(type: t, identity: id, property: e.name)] = .some(e.value)
                    }
                case .delete(let t, let id): deleted.insert(ObjectKey(type: t, identity: id))
                case .clear(let t): clearedTypes.insert(t)
                case .listSet(let t, let id, let p, _, _), .listInsert(let t, let id, let p, _, _),
                    .listErase(let t, let id, let p, _), .listClear(let t, let id, let p):
                    properties[PropertyKey(type: t, identity: id, property: p)] = .some(nil)
                case .addType, .addProperties, .changeIdentity:
                    continue
                }
            }
        }
    }

    /// The writes of `transactions` that concern the objects of `changes` (cheaper to hold and
    /// to filter with than all of them).
    init(_ transactions: [RealmTransaction], concerning changes: [ObjectChange]) {
        var keys = Set<ObjectKey>()
        var types = Set<String>()
        for c in changes {
            switch c {
            case .upsert(let t, let id, _), .update(let t, let id, _), .delete(let t, let id),
                .listChanged(let t, let id, _):
                keys.insert(ObjectKey(type: t, identity: id))
                types.insert(t)
            case .clear(let t): types.insert(t)
            }
        }
        self.init(transactions)
        properties = properties.filter { keys.contains(ObjectKey(type: $0.key.type, identity: $0.key.identity)) }
        created = created.intersection(keys)
        deleted = deleted.intersection(keys)
        clearedTypes = clearedTypes.intersection(types)
    }

    /// The part of a database change that the rule lets through, or nil for none of it.
    func filter(_ change: ObjectChange) -> ObjectChange? {
        switch change {
        case .upsert(let type, let identity, let values), .update(let type, let identity, let values):
            let key = ObjectKey(type: type, identity: identity)
            if created.contains(key) || deleted.contains(key) || clearedTypes.contains(type) { return nil }
            var kept = PropertyValues()
            for e in values {
                switch properties[PropertyKey(type: type, identity: identity, property: e.name)] {
                case .none: kept.append(e.name, e.value)  // not pending: the database's value
                case .some(.some(let mine)): kept.append(e.name, mine)  // pending: the Realm write's value
                case .some(.none): continue  // a pending list edit: keep the Realm's list
                }
            }
            if case .update = change { return .update(type: type, identity: identity, values: kept) }
            return .upsert(type: type, identity: identity, values: kept)
        case .delete(let type, let identity):
            return created.contains(ObjectKey(type: type, identity: identity)) ? nil : change
        case .clear:
            return change
        case .listChanged(let type, let identity, let property):
            // A list a pending Realm write edits, or whose owner it creates or deletes, keeps the Realm's contents.
            let key = ObjectKey(type: type, identity: identity)
            if created.contains(key) || deleted.contains(key) || clearedTypes.contains(type)
                || properties[PropertyKey(type: type, identity: identity, property: property)] != nil
            {
                return nil
            }
            return change
        }
    }
}
