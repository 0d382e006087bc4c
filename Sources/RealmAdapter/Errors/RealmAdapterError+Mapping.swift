/// Errors of rows and objects that the mapping cannot carry across. A row is named by its
/// table and key; text keys stay out of messages (``Mapping/keyText(_:)``).
extension RealmAdapterError {
    /// A row with no value in a column that keys it (`what`: "key" or "database key").
    static func noKeyValue(table: String, column: String, what: String = "key") -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "Table \(table): a row has no value in its \(what) column \(column).",
            context: ["db.table": table, "db.column": column])
    }

    /// A row whose columns cannot fill the `realm.path` template; `reasons` say which and why.
    static func unroutable(table: String, key: Value?, template: String, fields: [String], reasons: [String])
        -> RealmAdapterError
    {
        RealmAdapterError(
            .invalidValue,
            "Table \(table)\(key.map { ", row with key \(Mapping.keyText($0))" } ?? ""): realm.path \(template) "
                + "cannot choose its Realm: " + reasons.joined(separator: "; ") + ".",
            context: ["db.table": table, "db.column": fields.joined(separator: ",")])
    }

    /// A Realm path whose text for an int routing column is not the text of a number as the
    /// database writes it: the Realm's rows would route to another Realm.
    static func routingTextNotCanonical(table: String, column: String, type: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "Table \(table): this Realm's path does not give column \(column) (\(type)) a value as the database "
                + "writes it (for 7: 7, not 007 or +7), so its rows would route to another Realm; write to that Realm.",
            context: ["db.table": table, "db.column": column])
    }

    /// A join object's key that does not split into the parts `mapping.compoundPrimaryKeys` gives it.
    static func compoundKeyParts(type: String, parts: [String]) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "\(type): the key does not have the \(parts.count) parts "
                + "\(parts.joined(separator: TableMapping.compoundKeySeparator)) "
                + "that mapping.compoundPrimaryKeys gives it.",
            context: ["type": type])
    }

    /// A join object's key part that is not a value of its column's type.
    /// A join row whose key part holds the "-" that joins the parts (its object's key would be
    /// another row's).
    static func separatorInKeyPart(table: String, column: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            """
            Table \(table), column \(column): a key part holds "-", which joins the parts of a join object's key \
            (mapping.compoundPrimaryKeys); two rows could then be one object. Give the table a key column of its own, \
            or keep "-" out of its key columns.
            """,
            context: ["db.table": table, "db.column": column])
    }

    static func compoundKeyPart(type: String, part: String, of scalar: ScalarType) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "\(type): key part \(part) is not a valid \(scalar.rawValue).",
            context: ["type": type, "property": part])
    }

    /// A column converter given a value of a kind it does not convert.
    static func converterCannot(_ converter: String, kind: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "converter '\(converter)' cannot convert a \(kind) value",
            context: ["converter": converter, "value.kind": kind])
    }

    /// A NULL element in an array column mapped to a list of required values.
    static func nullElement(_ index: Int, property: Property, element: ScalarType) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "element \(index + 1) of the array is NULL, which \(property.name) (\(property.typeString)) cannot hold; "
                + "make it \(element.rawValue)?[] to allow NULL elements",
            context: ["property": property.name])
    }

    /// This error, said of a column of a table (and of the row with key `key`).
    public func inColumn(table: String, column: String, key: Value? = nil) -> RealmAdapterError {
        let row = key.map { ", row with key \(Mapping.keyText($0))" } ?? ""
        var copy = located("Table \(table), column \(column)\(row)", ["db.table": table, "db.column": column])
        copy.message += "."
        return copy
    }

    /// This error, said of a property written to a column.
    func inColumn(table: String, column: String, type: String, property: String) -> RealmAdapterError {
        var copy = located("\(type).\(property) → \(table).\(column)", ["db.table": table, "db.column": column])
        copy.message += "."
        return copy
    }
}
