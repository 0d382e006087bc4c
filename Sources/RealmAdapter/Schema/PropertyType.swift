/// The value types a property (or a list element) can hold.
public enum ScalarType: String, CaseIterable, Hashable, Sendable {
    case bool, int, float, double, string, data, date, decimal, uuid, objectId

    /// Types allowed as a primary key.
    public var canBePrimaryKey: Bool { self == .int || self == .string || self == .uuid || self == .objectId }
}

/// What a list holds: values of a scalar type, or links to objects of a type.
public enum ListElement: Hashable, Sendable {
    case scalar(ScalarType)
    case link(String)
}

/// The kind of a property.
public enum PropertyType: Hashable, Sendable {
    /// A single value.
    case scalar(ScalarType)
    /// A to-one link to an object of the named type (always nullable, as in Realm).
    case link(String)
    /// An ordered list of values or links.
    case list(ListElement)
    /// Computed backlinks: the objects of `objectType` whose `property` links here. Not stored.
    case linkingObjects(objectType: String, property: String)

    /// The linked type, for links and lists of links.
    public var linkTarget: String? {
        switch self {
        case .link(let t), .list(.link(let t)): t
        default: nil
        }
    }

    /// Whether the property is stored (linkingObjects are computed).
    public var isStored: Bool { if case .linkingObjects = self { false } else { true } }

    public var isList: Bool { if case .list = self { true } else { false } }
}

/// One property of an object type.
public struct Property: Hashable, Sendable {
    public var name: String
    public var type: PropertyType
    /// For scalars: null allowed. For lists of scalars: null elements allowed. Links are always optional.
    public var isOptional: Bool
    public var isIndexed: Bool
    /// The value an INSERT uses when it does not mention this property.
    public var defaultValue: Value?
    /// Legacy `watchTable` on list properties: the relational connector watches the link table.
    public var watchTable: Bool

    public init(
        name: String, type: PropertyType, isOptional: Bool = false, isIndexed: Bool = false,
        defaultValue: Value? = nil, watchTable: Bool = false
    ) {
        self.name = name
        self.type = type
        switch type {
        case .link: self.isOptional = true  // a to-one link is always nullable
        case .list(.link), .linkingObjects: self.isOptional = false  // lists of links hold no nulls
        default: self.isOptional = isOptional
        }
        self.isIndexed = isIndexed
        self.defaultValue = defaultValue
        self.watchTable = watchTable
    }

    /// The Realm JS short form: `"int"`, `"string?"`, `"Item"`, `"Item[]"`, `"int?[]"`.
    public var typeString: String {
        switch type {
        case .scalar(let s): s.rawValue + (isOptional ? "?" : "")
        case .link(let t): t
        case .list(.scalar(let s)): s.rawValue + (isOptional ? "?" : "") + "[]"
        case .list(.link(let t)): t + "[]"
        case .linkingObjects(let t, _): "linkingObjects<\(t)>"
        }
    }
}
