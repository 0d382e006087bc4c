/// `mapping`: how database tables and columns become Realm types and properties (README: The configuration file).
///
/// Each map is written once, database name → Realm name; the reverse direction is derived, so
/// the two directions cannot disagree.
public struct MappingConfiguration: Sendable {
    /// Table → type renames (legacy `mapPostgresTableName` / `mapRealmClassName`).
    public var tables: [String: String]
    /// Per type: column → property renames.
    public var columns: [String: [String: String]]
    /// Per type: property → built-in converter (legacy `convertPostgresValueToRealm`).
    public var convert: [String: [String: ValueConverter]]
    /// Database type name → Realm value type (legacy `customPostgresTypes`).
    public var customTypes: [String: ScalarType]
    /// Join types whose database primary key is compound (legacy `compoundPrimaryKeys`).
    public var compoundPrimaryKeys: [String: [CompoundKeyPart]]
    /// Per type: properties that never sync to the database (legacy `realmIgnoreProperties`).
    public var ignoreProperties: [String: Set<String>]

    public struct CompoundKeyPart: Sendable, Hashable {
        /// The Realm property holding the link (or value) for this part.
        public var property: String
        /// The database column of this part.
        public var dbColumn: String
        public var type: ScalarType
    }

    /// The Realm type a table maps to.
    public func typeName(forTable table: String) -> String { tables[table] ?? table }

    /// The table a Realm type maps to.
    public func tableName(forType type: String) -> String {
        tables.first { $0.value == type }?.key ?? type
    }

    /// The property a column of `type` maps to.
    public func propertyName(forColumn column: String, ofType type: String) -> String {
        columns[type]?[column] ?? column
    }

    /// The column a property of `type` maps to.
    public func columnName(forProperty property: String, ofType type: String) -> String {
        columns[type]?.first { $0.value == property }?.key ?? property
    }

    init(_ reader: JSONObjectReader?, schema: Schema) throws {
        tables = [:]
        columns = [:]
        convert = [:]
        customTypes = [:]
        compoundPrimaryKeys = [:]
        ignoreProperties = [:]
        guard var r = reader else { return }
        func requireType(_ o: JSONObjectReader, _ key: String) throws -> ObjectSchema {
            guard let t = schema[type: key] else {
                throw o.error(
                    key, "no type '\(key)' in schema (types: \(schema.types.map(\.name).joined(separator: ", "))).")
            }
            return t
        }
        func requireProperty(_ o: JSONObjectReader, _ t: ObjectSchema, _ property: String, at key: String? = nil) throws
        {
            guard t[property: property] != nil else {
                throw o.error(key ?? property, "type '\(t.name)' has no property '\(property)'.")
            }
        }
        let tableRenames = try r.stringMap("tables")
        var seenTypes: [String: String] = [:]
        for (table, type) in tableRenames {
            guard schema[type: type] != nil else {
                throw r.error("tables", "table '\(table)' maps to '\(type)', which is not a type in schema.")
            }
            if let other = seenTypes[type] {
                throw r.error(
                    "tables", "tables '\(other)' and '\(table)' both map to '\(type)'; each type maps to one table.")
            }
            seenTypes[type] = table
            tables[table] = type
        }
        if let o = try r.object("columns") {
            for m in o.members {
                let t = try requireType(o, m.key)
                var inner = try JSONObjectReader(m.value, path: o.path(m.key), code: .invalidConfiguration)
                var map: [String: String] = [:]
                for c in inner.members {
                    let property = try inner.requiredString(c.key)
                    try requireProperty(inner, t, property, at: c.key)
                    if let other = map.first(where: { $0.value == property }) {
                        throw inner.error(
                            c.key, "columns '\(other.key)' and '\(c.key)' both map to property '\(property)'.")
                    }
                    map[c.key] = property
                }
                columns[t.name] = map
            }
        }
        if let o = try r.object("convert") {
            for m in o.members {
                let t = try requireType(o, m.key)
                var inner = try JSONObjectReader(m.value, path: o.path(m.key), code: .invalidConfiguration)
                var map: [String: ValueConverter] = [:]
                for c in inner.members {
                    try requireProperty(inner, t, c.key)
                    let name = try inner.requiredString(c.key)
                    guard let conv = ValueConverter(rawValue: name) else {
                        throw inner.error(
                            c.key,
                            "unknown converter '\(name)' (expected "
                                + "\(ValueConverter.allCases.map(\.rawValue).joined(separator: ", ")))."
                        )
                    }
                    map[c.key] = conv
                }
                convert[t.name] = map
            }
        }
        if var o = try r.object("customTypes") {
            for m in o.members {
                let name = try o.requiredString(m.key)
                guard let s = ScalarType(rawValue: name) else {
                    throw o.error(
                        m.key,
                        "unknown Realm type '\(name)' (expected "
                            + "\(ScalarType.allCases.map(\.rawValue).joined(separator: ", ")))."
                    )
                }
                customTypes[m.key] = s
            }
        }
        if let o = try r.object("compoundPrimaryKeys") {
            for m in o.members {
                let t = try requireType(o, m.key)
                guard case .array(let items) = m.value, items.count >= 2 else {
                    throw o.error(
                        m.key, "expected an array of at least two key parts ({\"property\", \"dbColumn\", \"type\"}).")
                }
                compoundPrimaryKeys[t.name] = try items.enumerated().map { i, item in
                    var p = try JSONObjectReader(item, path: o.path(m.key) + "[\(i)]", code: .invalidConfiguration)
                    let property = try p.requiredString("property")
                    try requireProperty(p, t, property, at: "property")
                    let dbColumn = try p.string("dbColumn") ?? property
                    let typeName = try p.string("type") ?? "int"
                    guard let s = ScalarType(rawValue: typeName), s.canBePrimaryKey else {
                        throw p.error("type", "a key part must be int, string, uuid or objectId, not '\(typeName)'.")
                    }
                    try p.finish()
                    return CompoundKeyPart(property: property, dbColumn: dbColumn, type: s)
                }
                guard let pk = t.primaryKeyProperty, pk.type == .scalar(.string) else {
                    throw o.error(
                        m.key,
                        "a join type with a compound key needs a string primary key holding the parts joined "
                            + "by '-' (e.g. \"2-3\")."
                    )
                }
            }
        }
        if let o = try r.object("ignoreProperties") {
            for m in o.members {
                let t = try requireType(o, m.key)
                guard case .array(let items) = m.value else {
                    throw o.error(m.key, "expected an array of property names.")
                }
                var set = Set<String>()
                for (i, item) in items.enumerated() {
                    guard case .string(let name) = item else {
                        throw o.error(m.key, "item \(i) must be a property name.")
                    }
                    try requireProperty(o, t, name, at: m.key)
                    guard name != t.primaryKey else {
                        throw o.error(m.key, "the primary key '\(name)' cannot be ignored.")
                    }
                    set.insert(name)
                }
                ignoreProperties[t.name] = set
            }
        }
        try r.finish()
    }
}

/// Built-in value converters for `mapping.convert`, applied database → Realm and inverted
/// Realm → database.
public enum ValueConverter: String, Sendable, CaseIterable {
    /// Any value as its text (e.g. money, intervals, JSON).
    case string
    /// Text or numbers as an integer.
    case int
    /// Numerics as a double (e.g. numeric columns the app wants as floating point).
    case double
    /// Numerics as a decimal.
    case decimal
    /// 0/1, 't'/'f', 'true'/'false' as a bool.
    case bool
    /// Seconds since 1970 as a date.
    case epochSeconds
    /// Milliseconds since 1970 as a date.
    case epochMillis
    /// Text holding JSON, kept as its text.
    case json
}
