/// An object type: its name, its properties in declaration order, and its primary key.
public struct ObjectSchema: Hashable, Sendable {
    public var name: String
    /// The primary key property, or nil for a type whose objects are identified by row key.
    public var primaryKey: String?
    /// The database's own key column when it differs from the Realm primary key (legacy
    /// `sqlserverPrimaryKey`): e.g. an IDENTITY column while Realm uses a `RealmId` string.
    public var databasePrimaryKey: String?
    public private(set) var properties: [Property]
    private var index: [String: Int]

    public init(name: String, primaryKey: String? = nil, databasePrimaryKey: String? = nil, properties: [Property]) {
        self.name = name
        self.primaryKey = primaryKey
        self.databasePrimaryKey = databasePrimaryKey
        self.properties = properties
        self.index = Dictionary(properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public subscript(property name: String) -> Property? {
        index[name].map { properties[$0] }
    }

    /// Stored properties (everything but linkingObjects), in order.
    public var storedProperties: [Property] { properties.filter(\.type.isStored) }

    /// The primary key property, if any.
    public var primaryKeyProperty: Property? { primaryKey.flatMap { self[property: $0] } }

    mutating func append(_ property: Property) {
        index[property.name] = properties.count
        properties.append(property)
    }

    public static func == (a: ObjectSchema, b: ObjectSchema) -> Bool {
        a.name == b.name && a.primaryKey == b.primaryKey && a.databasePrimaryKey == b.databasePrimaryKey
            && a.properties == b.properties
    }

    public func hash(into h: inout Hasher) {
        h.combine(name)
        h.combine(primaryKey)
        h.combine(properties)
    }
}
