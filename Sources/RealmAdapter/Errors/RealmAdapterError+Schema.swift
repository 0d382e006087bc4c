/// Errors of instructions and reads that do not fit a Realm's schema.
extension RealmAdapterError {
    /// A type the Realm's schema does not have.
    static func unknownType(_ type: String) -> RealmAdapterError {
        RealmAdapterError(.schemaViolation, "unknown type '\(type)'", context: ["type": type])
    }

    /// A property the type does not have.
    static func unknownProperty(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation, "unknown property '\(property)' of type '\(type)'",
            context: ["type": type, "property": property])
    }

    /// A list operation on a property that is not a list.
    static func notAList(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation, "'\(type).\(property)' is not a list", context: ["type": type, "property": property])
    }

    /// A single-value read of a list or computed property.
    static func notASingleValue(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation, "\(type).\(property) is not a single-value property",
            context: ["type": type, "property": property])
    }

    /// A SET of a primary key.
    static func primaryKeyIsFixed(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation, "SET cannot change the primary key '\(property)' of \(type); delete and insert instead",
            context: ["type": type, "property": property])
    }

    /// An INSERT whose values give the primary key another value than its identity.
    static func primaryKeyDisagrees(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation,
            "the values of INSERT \(type) give primary key '\(property)' a different value than its identity",
            context: ["type": type, "property": property])
    }

    /// CHANGE_IDENTITY on a type with a primary key.
    static func identityIsPrimaryKey(type: String, primaryKey: String) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation,
            "CHANGE_IDENTITY applies only to types without a primary key; '\(type)' has '\(primaryKey)'",
            context: ["type": type])
    }
}
