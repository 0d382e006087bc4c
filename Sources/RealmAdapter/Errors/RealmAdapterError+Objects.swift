/// Errors of objects that are missing, already there, or out of a list's range.
extension RealmAdapterError {
    /// How an identity is shown: strings may be row values, so only their kind is.
    private static func keyText(_ type: ObjectSchema, _ id: Value) -> String {
        let name = type.primaryKey.map { "primary key '\($0)'" } ?? "row key"
        return "\(name) = \(id.kindName == "string" ? "the given string" : id.description)"
    }

    /// An INSERT (or CHANGE_IDENTITY) of an identity that exists.
    static func duplicateKey(_ type: ObjectSchema, _ id: Value) -> RealmAdapterError {
        RealmAdapterError(
            .duplicatePrimaryKey, "\(type.name) already has an object with \(keyText(type, id))",
            context: ["type": type.name])
    }

    /// An edit of an object that does not exist.
    static func objectNotFound(_ type: ObjectSchema, _ id: Value) -> RealmAdapterError {
        RealmAdapterError(
            .objectNotFound, "\(type.name) has no object with \(keyText(type, id))", context: ["type": type.name])
    }

    /// A link to an object that does not exist.
    static func linkTargetMissing(type: String, property: String, target: String, kind: String) -> RealmAdapterError {
        RealmAdapterError(
            .objectNotFound,
            "\(type).\(property) links to a \(target) that does not exist (\(kind) key); insert the \(target) first",
            context: ["type": type, "property": property])
    }

    /// A list index past the end (`inserting`: one past the end is allowed).
    static func listIndexOutOfRange(
        type: String, property: String, index: Int, count: Int, inserting: Bool
    ) -> RealmAdapterError {
        RealmAdapterError(
            .listIndexOutOfRange,
            "list index \(index) is out of range for \(type).\(property), which has \(count) "
                + "element\(count == 1 ? "" : "s")" + (inserting ? " (insert at 0...\(count))" : ""),
            context: ["type": type, "property": property])
    }
}
