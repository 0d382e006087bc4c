import GraphQL
import RealmAdapter

/// The mutations of ``RealmGraphQLSchema``: each is one Realm transaction with the caller's origin.
enum GraphQLMutations {
    /// Creates or updates one object per input, as `policy` says, and returns them as stored.
    static func create(_ t: ObjectSchema, _ inputs: [Map], policy: String?, _ c: GraphQLContext) throws
        -> [RealmObject]
    {
        guard let pk = t.primaryKey else {
            throw GraphQLError(message: "\(t.name) has no primary key: its objects cannot be created through GraphQL.")
        }
        let policy = policy ?? "NONE"
        let (ids, _) = try resolving {
            try c.store.write(to: c.path, origin: c.origin) { tx -> [RealmAdapter.Value] in
                try inputs.map { input in
                    var values = try Self.values(t, input, c.schema)
                    guard let key = values[pk], !key.isNull else {
                        throw GraphQLError(message: "\(t.name)Input needs \(pk), the primary key.")
                    }
                    let exists = try tx.object(t.name, key) != nil
                    if exists && policy == "NONE" {
                        throw GraphQLError(
                            message:
                                "A \(t.name) with \(pk) \(key) exists already: updatePolicy MODIFIED or ALL updates it."
                        )
                    }
                    if policy == "ALL" {
                        // Only what GraphQL shows: properties it cannot name keep their values.
                        for p in t.properties
                        where p.type.isStored && RealmGraphQLSchema.isName(p.name) && values[p.name] == nil {
                            if p.type.isList {
                                values.append(p.name, .list([]))
                            } else if p.isOptional {
                                values.append(p.name, .null)
                            }
                        }
                    }
                    if exists { try tx.upsert(t.name, key, values) } else { _ = try tx.create(t.name, values) }
                    return key
                }
            }
        }
        return try ids.compactMap { try c.store.object(of: t.name, identity: $0, in: c.path) }
    }

    /// Deletes the objects `filter` selects (read first, then deleted in one transaction if
    /// they are still there); how many.
    static func delete(_ t: ObjectSchema, matching filter: String, _ c: GraphQLContext) throws -> Int {
        let keys = try resolving { try c.store.objects(of: t.name, in: c.path, ObjectQuery(filter: filter)) }
            .map(\.identity)
        guard !keys.isEmpty else { return 0 }
        let (deleted, _) = try c.store.write(to: c.path, origin: c.origin) { tx -> Int in
            var n = 0
            for key in keys where try tx.object(t.name, key) != nil {
                try tx.delete(t.name, key)
                n += 1
            }
            return n
        }
        return deleted
    }

    /// `body`, its store errors as GraphQL errors with their message alone (no log context).
    static func resolving<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let e as RealmAdapterError {
            throw GraphQLError(message: e.message)
        }
    }

    /// Deletes the object with `key`; false if there was none.
    static func delete(_ t: ObjectSchema, _ key: RealmAdapter.Value, _ c: GraphQLContext) throws -> Bool {
        let (deleted, _) = try resolving {
            try c.store.write(to: c.path, origin: c.origin) { tx -> Bool in
                let key = try key.coercedKey(of: t.name, in: c.schema)
                guard try tx.object(t.name, key) != nil else { return false }
                try tx.delete(t.name, key)
                return true
            }
        }
        return deleted
    }

    /// An input object's values, coerced to the properties by the core's rules (links by key).
    static func values(_ t: ObjectSchema, _ input: Map, _ schema: Schema) throws -> PropertyValues {
        guard case .dictionary(let fields) = input else {
            throw GraphQLError(message: "\(t.name)Input: expected an object.")
        }
        var values = PropertyValues()
        for (name, value) in fields {
            if case .undefined = value { continue }
            guard let p = t.properties.first(where: { $0.name == name }) else {
                throw GraphQLError(message: "\(t.name) has no property \(name).")
            }
            do {
                values.append(name, try RealmAdapter.Value(json: GraphQLValues.json(value)).coerced(to: p, in: schema))
            } catch let e as RealmAdapterError {
                throw GraphQLError(message: "\(t.name).\(name): \(e.message)")
            }
        }
        return values
    }
}
