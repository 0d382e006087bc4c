/// What one transaction changed in a Realm: per object type, the objects it inserted, modified
/// (with each changed property's value before and after) and deleted (with their last values),
/// and the schema changes it made.
///
/// One computation (``RealmStore/changeSet(of:in:)``) serves event handlers, webhooks and
/// subscriptions. It compares each object the transaction touched as it was before the
/// transaction with the object at the transaction's end, so it is the net effect: an object
/// inserted and deleted in one transaction is not there, a SET to the value it had is not a
/// modification. Links nulled because their target was deleted, and lists an object left, show
/// as modifications of the objects holding them. A CHANGE_IDENTITY is the old identity deleted
/// and the new one inserted (and ``TypeChanges/identityChanges`` pairs them).
public struct ChangeSet: Hashable, Sendable {
    public var path: String
    public var version: Int64
    /// Who wrote the transaction (`adapter:postgres`, `local`, …).
    public var origin: String
    public var committedAt: Timestamp
    /// The types with changed objects, by name.
    public var types: [TypeChanges]
    /// The transaction's ADD_TYPE and ADD_PROPERTIES, in order.
    public var schemaChanges: [Instruction]

    public init(
        path: String, version: Int64, origin: String, committedAt: Timestamp, types: [TypeChanges] = [],
        schemaChanges: [Instruction] = []
    ) {
        self.path = path
        self.version = version
        self.origin = origin
        self.committedAt = committedAt
        self.types = types
        self.schemaChanges = schemaChanges
    }

    /// The changes to objects of `name`, or nil when the transaction changed none.
    public subscript(type name: String) -> TypeChanges? { types.first { $0.objectType == name } }

    /// Whether the transaction changed neither objects nor the schema.
    public var isEmpty: Bool { types.isEmpty && schemaChanges.isEmpty }
}

/// The objects of one type that a transaction changed, each list in identity order.
public struct TypeChanges: Hashable, Sendable {
    public var objectType: String
    /// The new objects, as they are at the end of the transaction.
    public var inserted: [RealmObject] = []
    /// Objects that existed before and after, whose values changed.
    public var modified: [ObjectModification] = []
    /// The objects removed, with their values before the transaction.
    public var deleted: [RealmObject] = []
    /// CHANGE_IDENTITY instructions of the transaction on this type, in order.
    public var identityChanges: [IdentityChange] = []

    public init(objectType: String) { self.objectType = objectType }

    var isEmpty: Bool { inserted.isEmpty && modified.isEmpty && deleted.isEmpty && identityChanges.isEmpty }
}

/// An object whose values a transaction changed.
public struct ObjectModification: Hashable, Sendable {
    /// The object at the end of the transaction.
    public var object: RealmObject
    /// The properties whose values differ, in schema order.
    public var changes: [PropertyChange]

    public var identity: Value { object.identity }
}

/// One property's value before and after a transaction (lists as `.list`).
public struct PropertyChange: Hashable, Sendable {
    public var name: String
    public var before: Value
    public var after: Value
}

/// A CHANGE_IDENTITY: the object known as `from` is now `to`.
public struct IdentityChange: Hashable, Sendable {
    public var from: Value
    public var to: Value
}

extension ChangeSet {
    /// Adds what happened to one object: it was `before` (nil: absent) and is `after`.
    mutating func add(type: String, before: RealmObject?, after: RealmObject?) {
        var changes = self[type: type] ?? TypeChanges(objectType: type)
        switch (before, after) {
        case (nil, let after?): changes.inserted.append(after)
        case (let before?, nil): changes.deleted.append(before)
        case (let before?, let after?):
            let changed = after.values.compactMap { e -> PropertyChange? in
                let old = before.values[e.name] ?? .null
                return old == e.value ? nil : PropertyChange(name: e.name, before: old, after: e.value)
            }
            guard !changed.isEmpty else { return }
            changes.modified.append(ObjectModification(object: after, changes: changed))
        case (nil, nil): return
        }
        put(changes)
    }

    mutating func put(_ changes: TypeChanges) {
        if let i = types.firstIndex(where: { $0.objectType == changes.objectType }) {
            types[i] = changes
        } else {
            types.append(changes)
            types.sort { $0.objectType < $1.objectType }
        }
    }
}
