extension Instruction {
    /// The instruction checked against `schema`, with every value converted to its property's type.
    ///
    /// - Throws: `schemaViolation` for an unknown type or property or a misuse (a list edit on a
    ///   non-list, CHANGE_IDENTITY on a type with a primary key), `invalidValue` for a value that
    ///   does not fit, each naming the type and property.
    public func coerced(in schema: Schema) throws -> Instruction {
        func type(_ name: String) throws -> ObjectSchema {
            guard let t = schema[type: name] else {
                throw RealmAdapterError.unknownType(name)
            }
            return t
        }
        func key(_ t: ObjectSchema, _ v: Value, _ what: String = "identity") throws -> Value {
            do { return try v.coercedKey(of: t.name, in: schema) } catch let e as RealmAdapterError {
                throw e.located("\(what) of \(t.name)", ["type": t.name])
            }
        }
        func property(_ t: ObjectSchema, _ name: String) throws -> Property {
            guard let p = t[property: name] else {
                throw RealmAdapterError.unknownProperty(type: t.name, property: name)
            }
            guard p.type.isStored else {
                throw RealmAdapterError.computedProperty(type: t.name, property: name)
            }
            return p
        }
        func values(_ t: ObjectSchema, _ v: PropertyValues) throws -> PropertyValues {
            var out = PropertyValues()
            out.reserveCapacity(v.count)
            for e in v {
                let p = try property(t, e.name)
                do { out.append(e.name, try e.value.coerced(to: p, in: schema)) } catch let err as RealmAdapterError {
                    throw err.located("\(t.name).\(e.name)", ["type": t.name, "property": e.name])
                }
            }
            return out
        }
        func listProperty(_ t: ObjectSchema, _ name: String) throws -> Property {
            let p = try property(t, name)
            guard p.type.isList else {
                throw RealmAdapterError.notAList(type: t.name, property: name)
            }
            return p
        }
        func element(_ t: ObjectSchema, _ p: Property, _ v: Value) throws -> Value {
            try Self.listElement(v, of: t, p, in: schema)
        }

        switch self {
        case .insert(let n, let id, let v):
            let t = try type(n)
            return .insert(objectType: n, identity: try key(t, id), values: try values(t, v))
        case .set(let n, let id, let v):
            let t = try type(n)
            return .set(objectType: n, identity: try key(t, id), values: try values(t, v))
        case .delete(let n, let id):
            return .delete(objectType: n, identity: try key(try type(n), id))
        case .clear(let n):
            _ = try type(n)
            return self
        case .listSet(let n, let id, let pn, let i, let v):
            let t = try type(n)
            let p = try listProperty(t, pn)
            return .listSet(
                objectType: n, identity: try key(t, id), property: pn, index: i, value: try element(t, p, v))
        case .listInsert(let n, let id, let pn, let i, let v):
            let t = try type(n)
            let p = try listProperty(t, pn)
            return .listInsert(
                objectType: n, identity: try key(t, id), property: pn, index: i, value: try element(t, p, v))
        case .listErase(let n, let id, let pn, let i):
            let t = try type(n)
            _ = try listProperty(t, pn)
            return .listErase(objectType: n, identity: try key(t, id), property: pn, index: i)
        case .listClear(let n, let id, let pn):
            let t = try type(n)
            _ = try listProperty(t, pn)
            return .listClear(objectType: n, identity: try key(t, id), property: pn)
        case .changeIdentity(let n, let id, let new):
            let t = try type(n)
            guard t.primaryKey == nil else {
                throw RealmAdapterError.identityIsPrimaryKey(type: n, primaryKey: t.primaryKey!)
            }
            return .changeIdentity(
                objectType: n, identity: try key(t, id), newIdentity: try key(t, new, "new_identity"))
        case .addType(let t):
            let typed = try Self.typedDefaults(t.properties, of: t.name, in: try schema.adding(t, validate: false))
            return .addType(
                ObjectSchema(
                    name: t.name, primaryKey: t.primaryKey, databasePrimaryKey: t.databasePrimaryKey, properties: typed)
            )
        case .addProperties(let n, let props):
            let grown = try schema.adding(properties: props, to: n, validate: false)
            return .addProperties(objectType: n, properties: try Self.typedDefaults(props, of: n, in: grown))
        }
    }
}

extension Schema {
    /// The schema after a schema instruction (ADD_TYPE, ADD_PROPERTIES); itself for any other.
    public func applying(_ instruction: Instruction) throws -> Schema {
        switch instruction {
        case .addType(let t): try adding(t)
        case .addProperties(let n, let props): try adding(properties: props, to: n)
        default: self
        }
    }
}

extension Instruction {
    /// `properties` with each default converted to its property's type, as values are: the
    /// schema (kept in the store, and in history) then holds `9007199254740993` for an int's
    /// `9007199254740993.0`, not the text of the decimal JSON read it as, which no int takes.
    static func typedDefaults(_ properties: [Property], of type: String, in schema: Schema) throws -> [Property] {
        try properties.map { p in
            guard let d = p.defaultValue, case .scalar = p.type else { return p }
            var typed = p
            do { typed.defaultValue = try d.coerced(to: p, in: schema) } catch let e as RealmAdapterError {
                throw Schema.error(type, p.name, "the default value does not fit: \(e.message)")
            }
            return typed
        }
    }

    /// An element of list property `p` of type `t`, converted to the list's element type.
    static func listElement(_ v: Value, of t: ObjectSchema, _ p: Property, in schema: Schema) throws -> Value {
        do {
            switch p.type {
            case .list(.scalar(let s)): return try v.coerced(to: s, optional: p.isOptional)
            case .list(.link(let target)): return try v.coercedKey(of: target, in: schema)
            default: return v
            }
        } catch let err as RealmAdapterError {
            throw err.located("\(t.name).\(p.name) element", ["type": t.name, "property": p.name])
        }
    }
}
