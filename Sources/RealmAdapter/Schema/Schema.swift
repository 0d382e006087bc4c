/// A Realm's schema: its object types in declaration order.
///
/// A `Schema` is always valid: every initializer and change validates links, linkingObjects,
/// primary keys and defaults, and throws ``RealmAdapterError`` (`invalidSchema`) naming the type
/// and property at fault.
public struct Schema: Hashable, Sendable {
    public private(set) var types: [ObjectSchema]
    private var index: [String: Int]

    public static let empty = Schema(unchecked: [])

    public init(_ types: [ObjectSchema]) throws {
        self.init(unchecked: types)
        try validate()
    }

    init(unchecked types: [ObjectSchema]) {
        self.types = types
        self.index = Dictionary(types.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public subscript(type name: String) -> ObjectSchema? { index[name].map { types[$0] } }

    public var isEmpty: Bool { types.isEmpty }

    public static func == (a: Schema, b: Schema) -> Bool { a.types == b.types }
    public func hash(into h: inout Hasher) { h.combine(types) }

    // MARK: Changes

    /// The schema with `type` added, or merged into an existing type of that name.
    ///
    /// Merging is additive only: new properties are appended; a property that exists must have
    /// the same definition, and the primary key cannot change. Anything else is a destructive
    /// change and throws.
    /// With `validate: false` the result may refer to types not added yet (a transaction adds
    /// its types one by one and is validated as a whole when it ends).
    public func adding(_ type: ObjectSchema, validate: Bool = true) throws -> Schema {
        var copy = self
        if let i = index[type.name] {
            var existing = types[i]
            guard existing.primaryKey == type.primaryKey else {
                throw Self.error(
                    type.name, nil,
                    "cannot change the primary key from \(existing.primaryKey.map { "'\($0)'" } ?? "none") "
                        + "to \(type.primaryKey.map { "'\($0)'" } ?? "none") (destructive schema change)"
                )
            }
            for p in type.properties {
                if let old = existing[property: p.name] {
                    guard old.type == p.type, old.isOptional == p.isOptional else {
                        throw Self.error(
                            type.name, p.name,
                            "cannot change type from '\(old.typeString)' to '\(p.typeString)' (destructive "
                                + "schema change)"
                        )
                    }
                } else {
                    guard p.isOptional || p.defaultValue != nil || p.type.isList || !p.type.isStored else {
                        throw Self.error(
                            type.name, p.name,
                            "a property added to an existing type must be optional, a list, or have a default")
                    }
                    existing.append(p)
                }
            }
            copy.types[i] = existing
        } else {
            copy.index[type.name] = copy.types.count
            copy.types.append(type)
        }
        if validate { try copy.validate() }
        return copy
    }

    /// The schema with `properties` added to the existing type `typeName`.
    public func adding(properties: [Property], to typeName: String, validate: Bool = true) throws -> Schema {
        guard let existing = self[type: typeName] else {
            throw Self.error(typeName, nil, "cannot add properties to a type that does not exist")
        }
        return try adding(
            ObjectSchema(
                name: typeName, primaryKey: existing.primaryKey,
                databasePrimaryKey: existing.databasePrimaryKey, properties: properties), validate: validate)
    }

    // MARK: Validation

    static func error(_ type: String, _ property: String?, _ message: String) -> RealmAdapterError {
        var ctx = ["type": type]
        if let property { ctx["property"] = property }
        let whereText = property.map { "\(type).\($0)" } ?? type
        return RealmAdapterError(.invalidSchema, "Schema error in \(whereText): \(message).", context: ctx)
    }

    /// Checks links, linkingObjects, primary keys and defaults across all types.
    public func validate() throws {
        var seen = Set<String>()
        for t in types {
            guard !t.name.isEmpty else { throw Self.error("(unnamed)", nil, "a type needs a name") }
            guard seen.insert(t.name).inserted else { throw Self.error(t.name, nil, "the type is defined twice") }
            var names = Set<String>()
            for p in t.properties {
                guard !p.name.isEmpty else { throw Self.error(t.name, nil, "a property has an empty name") }
                guard names.insert(p.name).inserted else {
                    throw Self.error(t.name, p.name, "the property is defined twice")
                }
                switch p.type {
                case .link(let target), .list(.link(let target)):
                    guard self[type: target] != nil else {
                        throw Self.error(t.name, p.name, "links to unknown type '\(target)'")
                    }
                case .linkingObjects(let origin, let prop):
                    guard let o = self[type: origin] else {
                        throw Self.error(t.name, p.name, "linkingObjects refers to unknown type '\(origin)'")
                    }
                    guard let back = o[property: prop] else {
                        throw Self.error(
                            t.name, p.name, "linkingObjects refers to '\(origin).\(prop)', which does not exist")
                    }
                    guard back.type.linkTarget == t.name else {
                        throw Self.error(
                            t.name, p.name,
                            "linkingObjects refers to '\(origin).\(prop)', which is not a link to '\(t.name)'")
                    }
                case .scalar, .list(.scalar): break
                }
                if p.isIndexed, case .scalar = p.type {
                } else if p.isIndexed {
                    throw Self.error(t.name, p.name, "only single-value properties can be indexed")
                }
                if p.defaultValue != nil, !p.type.isStored || p.type.isList {
                    throw Self.error(
                        t.name, p.name,
                        "a list or linkingObjects property takes no default (a new object's list starts empty)")
                }
                if let d = p.defaultValue {
                    do { _ = try d.coerced(to: p, in: self) } catch let e as RealmAdapterError {
                        throw Self.error(t.name, p.name, "the default value does not fit: \(e.message)")
                    }
                }
            }
            if let pk = t.primaryKey {
                guard let p = t[property: pk] else {
                    throw Self.error(t.name, pk, "the primary key '\(pk)' is not among the properties")
                }
                guard case .scalar(let s) = p.type, s.canBePrimaryKey else {
                    throw Self.error(
                        t.name, pk, "a primary key must be int, string, uuid or objectId, not '\(p.typeString)'")
                }
            }
            if let dpk = t.databasePrimaryKey {
                guard !dpk.isEmpty else { throw Self.error(t.name, nil, "databasePrimaryKey must not be empty") }
                guard let p = t[property: dpk] else {
                    throw Self.error(t.name, dpk, "databasePrimaryKey '\(dpk)' is not among the properties")
                }
                guard dpk != t.primaryKey else {
                    throw Self.error(
                        t.name, dpk,
                        "databasePrimaryKey must differ from the primary key (the Realm's key, e.g. RealmId)")
                }
                guard case .scalar(let s) = p.type, s.canBePrimaryKey, p.isOptional else {
                    throw Self.error(
                        t.name, dpk,
                        "databasePrimaryKey must be an optional int, string, uuid or objectId (objects "
                            + "created in a Realm have none until the database gives them one), not '\(p.typeString)'"
                    )
                }
                guard case .scalar(let k)? = t.primaryKeyProperty?.type, k == .string || k == .uuid else {
                    throw Self.error(
                        t.name, t.primaryKey,
                        "with databasePrimaryKey the primary key must be a string or uuid (a RealmId: rows "
                            + "the database creates get a generated one)"
                    )
                }
            }
        }
    }
}
