/// Rows ⇄ objects, driven by the configuration: the one mapping engine that the loader, both
/// sync directions and every relational connector share (ARCHITECTURE.md: Realm → database,
/// Database → Realm). No SQL here: connectors turn ``DatabaseWrite``s into their dialect and
/// their change streams into ``RowChange``s.
///
/// Every synced type needs a primary key (rows are found by it). A property maps to a column
/// of the same name unless `mapping.columns` renames it; a type maps to a table of its name
/// unless `mapping.tables` renames it. To-one links are foreign-key columns holding the
/// target's key; lists of primitives are array columns; linkingObjects are computed and not
/// stored; `mapping.ignoreProperties` stay in the Realm only. A `realm.path` template routes
/// rows to Realms by their columns, and fills those columns from the path the other way.
public struct Mapping: Sendable {
    public let schema: Schema
    public let configuration: MappingConfiguration
    public let path: RealmPathTemplate
    public let tables: [TableMapping]
    private let byTable: [String: Int]
    private let byType: [String: Int]
    private let byLinkTable: [String: (Int, Int)]
    /// Per type, its link properties whose targets have a database key, with the target's table.
    let linksByDatabaseKey: [String: [String: Int]]

    /// - Throws: `invalidConfiguration` naming the type and property that cannot be mapped.
    public init(schema: Schema, mapping: MappingConfiguration, path: RealmPathTemplate) throws {
        self.schema = schema
        self.configuration = mapping
        self.path = path
        var tables: [TableMapping] = []
        for t in schema.types {
            tables.append(try TableMapping(type: t, schema: schema, mapping: mapping, path: path))
        }
        self.tables = tables
        byTable = Dictionary(tables.enumerated().map { ($1.table, $0) }, uniquingKeysWith: { a, _ in a })
        var lists: [String: (Int, Int)] = [:]
        for (i, t) in tables.enumerated() { for (j, l) in t.linkLists.enumerated() { lists[l.table] = (i, j) } }
        byLinkTable = lists
        let byType = Dictionary(tables.enumerated().map { ($1.type.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.byType = byType
        var keyLinks: [String: [String: Int]] = [:]
        for t in tables {
            for c in t.columns {
                if case .link(let target, _) = c.kind, let i = byType[target], tables[i].databaseKey != nil {
                    keyLinks[t.type.name, default: [:]][c.property.name] = i
                }
            }
        }
        linksByDatabaseKey = keyLinks
    }

    public init(_ c: Configuration) throws {
        try self.init(schema: c.schema, mapping: c.mapping, path: c.realm.path)
    }

    /// Whether some type has a database key of its own (`databasePrimaryKey`).
    public var hasDatabaseKeys: Bool { tables.contains { $0.databaseKey != nil } }

    public func table(named table: String) -> TableMapping? { byTable[table].map { tables[$0] } }
    public func table(forType type: String) -> TableMapping? { byType[type].map { tables[$0] } }

    /// The list a link table holds, with its owner's table.
    public func linkList(named table: String) -> (TableMapping, LinkListMapping)? {
        byLinkTable[table].map { (tables[$0.0], tables[$0.0].linkLists[$0.1]) }
    }
}

/// How one type maps to one table.
public struct TableMapping: Sendable {
    public let type: ObjectSchema
    public let table: String
    /// Single-value properties and primitive lists, in schema order (ignored ones left out).
    public let columns: [ColumnMapping]
    /// The column of the primary key (for a join type, the first of its key columns).
    public let keyColumn: String
    /// The key columns: one, or the parts of a compound key (`mapping.compoundPrimaryKeys`).
    public let keyColumns: [String]
    /// The position of ``keyColumn`` in ``columns`` (nil for a join type, whose key is made of parts).
    public let keyColumnIndex: Int?
    /// For a join type: the parts its string key `"a-b"` is made of, in order.
    public let compoundKey: [MappingConfiguration.CompoundKeyPart]?
    /// What joins a join object's key parts (legacy: `"2-3"`).
    public static let compoundKeySeparator = "-"
    /// Columns that the path template reads and that are not properties of the type.
    public let pathColumns: [String]
    /// Per column, what rows read of it, apart from the column itself (a class: using it per
    /// row costs reference counting): its property's name and ``ColumnMapping/plainScalar``.
    let propertyNames: [String]
    let plainScalars: [ScalarType?]
    /// Lists of links, each a link table `(oid, idx, target)`.
    public let linkLists: [LinkListMapping]
    /// The database's own key when it is not the Realm's (`databasePrimaryKey`): the Realm
    /// key (``keyColumn``, a RealmId) then identifies rows for the Realm only.
    public let databaseKey: DatabaseKeyMapping?
    /// The column foreign keys and link tables refer to: the database key, or the key column.
    public var referencedColumn: String { databaseKey?.column ?? keyColumn }
    /// Whether its rows give lists (array columns): a loader does not prepare them, as prepared
    /// rows hold single values (``PreparedInserts``).
    var rowsGiveLists: Bool { columns.contains { if case .array = $0.kind { true } else { false } } }
    /// How a write finds this table's database key from a RealmId.
    var reference: KeyReference? {
        databaseKey.map { KeyReference(table: table, column: $0.column, byColumn: keyColumn) }
    }

    public func column(forProperty name: String) -> ColumnMapping? { columns.first { $0.property.name == name } }
    public func column(named name: String) -> ColumnMapping? { columns.first { $0.column == name } }

    init(type t: ObjectSchema, schema: Schema, mapping: MappingConfiguration, path: RealmPathTemplate) throws {
        func fail(_ property: String?, _ message: String) -> RealmAdapterError {
            RealmAdapterError(
                .invalidConfiguration, "Cannot map \(property.map { "\(t.name).\($0)" } ?? t.name): \(message).",
                context: ["type": t.name].merging(property.map { ["property": $0] } ?? [:]) { a, _ in a })
        }
        guard let pk = t.primaryKey else {
            throw fail(nil, "a synced type needs a primary key, because rows and objects are matched by it")
        }
        type = t
        table = mapping.tableName(forType: t.name)
        compoundKey = mapping.compoundPrimaryKeys[t.name]
        if compoundKey != nil && t.databasePrimaryKey != nil {
            throw fail(nil, "a join type (mapping.compoundPrimaryKeys) cannot also have a databasePrimaryKey")
        }
        if let parts = compoundKey {
            keyColumns = parts.map(\.dbColumn)
            keyColumn = keyColumns[0]
        } else {
            keyColumn = mapping.columnName(forProperty: pk, ofType: t.name)
            keyColumns = [keyColumn]
        }
        let ignored = mapping.ignoreProperties[t.name] ?? []
        var columns: [ColumnMapping] = []
        var linkLists: [LinkListMapping] = []
        for p in t.properties where p.type.isStored && !ignored.contains(p.name) {
            // A join type's string key exists only in the Realm: the database has its parts.
            if compoundKey != nil && p.name == pk { continue }
            let column =
                compoundKey?.first { $0.property == p.name }?.dbColumn
                ?? mapping.columnName(forProperty: p.name, ofType: t.name)
            let converter = mapping.convert[t.name]?[p.name]
            switch p.type {
            case .scalar(let s):
                columns.append(ColumnMapping(property: p, column: column, converter: converter, kind: .scalar(s)))
            case .link(let target):
                guard let targetType = schema[type: target], let keyType = Self.referencedKeyType(targetType) else {
                    throw fail(
                        p.name, "its target type '\(target)' needs a primary key for the foreign key to refer to")
                }
                columns.append(
                    ColumnMapping(
                        property: p, column: column, converter: nil, kind: .link(target: target, keyType: keyType)))
            case .list(.scalar(let s)):
                columns.append(ColumnMapping(property: p, column: column, converter: nil, kind: .array(s)))
            case .list(.link(let target)):
                guard let targetType = schema[type: target], let keyType = Self.referencedKeyType(targetType),
                    let ownerKeyType = Self.referencedKeyType(t)
                else {
                    throw fail(p.name, "its target type '\(target)' needs a primary key for the link table to refer to")
                }
                // A join object's list: `oid` holds its string key ("2-3"), as the Realm has it.
                linkLists.append(
                    LinkListMapping(
                        property: p, table: "\(table)_\(column)", owner: t.name, ownerKeyType: ownerKeyType,
                        target: target, targetKeyType: keyType))
            case .linkingObjects:
                continue
            }
        }
        self.columns = columns
        propertyNames = columns.map(\.property.name)
        plainScalars = columns.map(\.plainScalar)
        let key = keyColumn
        keyColumnIndex = compoundKey == nil ? columns.firstIndex { $0.column == key } : nil
        self.linkLists = linkLists
        if let dpk = t.databasePrimaryKey {
            guard let i = columns.firstIndex(where: { $0.property.name == dpk }), case .scalar(let s) = columns[i].kind
            else {
                throw fail(dpk, "the databasePrimaryKey must be synced (not in mapping.ignoreProperties)")
            }
            databaseKey = DatabaseKeyMapping(property: dpk, column: columns[i].column, type: s, index: i)
        } else {
            databaseKey = nil
        }
        let propertyColumns = Set(columns.map(\.column))
        pathColumns = path.fields.filter { !propertyColumns.contains($0) }
    }
}

extension TableMapping {
    /// The type of the key that foreign keys to `t` hold: its database key, or its primary key.
    static func referencedKeyType(_ t: ObjectSchema) -> ScalarType? {
        guard let name = t.databasePrimaryKey ?? t.primaryKey, case .scalar(let s)? = t[property: name]?.type else {
            return nil
        }
        return s
    }
}

/// An ordered list of links as a link table `(oid, idx, target)`: the owner's key, the
/// zero-based position, and the target's key (legacy Postgres naming), in both directions.
public struct LinkListMapping: Sendable {
    public let property: Property
    /// `<owner table>_<column>`.
    public let table: String
    /// The owner's type.
    public let owner: String
    /// The type of `oid`: the owner's database key, or its primary key.
    public let ownerKeyType: ScalarType
    public let target: String
    public let targetKeyType: ScalarType
    public static let ownerColumn = "oid", indexColumn = "idx", targetColumn = "target"
}

/// How one property maps to one column.
///
/// A class: the mapping reads every column of every row, and copying a reference costs one
/// retain where copying the fields cost one each.
public final class ColumnMapping: Sendable {
    public enum Kind: Sendable, Hashable {
        case scalar(ScalarType)
        /// A foreign key holding the target's primary key (its database key, if it has one).
        case link(target: String, keyType: ScalarType)
        /// An array column holding a list of primitives.
        case array(ScalarType)
    }

    public let property: Property
    public let column: String
    public let converter: ValueConverter?
    public let kind: Kind
    /// Read per row: kept apart so that reading them does not copy `property`.
    let isOptional: Bool
    /// What a NULL becomes: an empty list for a list, else null.
    let nullValue: Value
    /// The property's type for a scalar column without a converter: a value of that type is
    /// the Realm value as it is.
    let plainScalar: ScalarType?

    init(property: Property, column: String, converter: ValueConverter?, kind: Kind) {
        self.property = property
        self.column = column
        self.converter = converter
        self.kind = kind
        isOptional = property.isOptional
        nullValue = property.type.isList ? .list([]) : .null
        plainScalar = if converter == nil, case .scalar(let s) = kind { s } else { nil }
    }

    /// The Realm value of a column value.
    public func realmValue(_ v: Value) throws -> Value {
        if v.isNull { return nullValue }
        switch kind {
        case .scalar(let s):
            return try (converter?.toRealm(v) ?? v).coerced(to: s, optional: isOptional)
        case .link(_, let keyType):
            return try v.coerced(to: keyType, optional: false)
        case .array(let s):
            guard case .list(let items) = v else {
                throw RealmAdapterError.expected("an array", found: v.kindName)
            }
            if !isOptional, let i = items.firstIndex(where: \.isNull) {
                throw RealmAdapterError.nullElement(i, property: property, element: s)
            }
            return .list(try items.map { try $0.coerced(to: s, optional: isOptional) })
        }
    }

    /// The column value of a Realm value.
    public func databaseValue(_ v: Value) throws -> Value {
        guard let converter, !v.isNull, case .scalar = kind else { return v }
        return try converter.toDatabase(v)
    }
}
