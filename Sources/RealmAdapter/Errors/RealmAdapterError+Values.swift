/// Errors of values that do not fit where they are written. Messages name the value's kind,
/// never the value.
extension RealmAdapterError {
    /// A database value a connector cannot convert; `message` names its type, never the value.
    public static func invalidValue(_ message: String) -> RealmAdapterError {
        RealmAdapterError(.invalidValue, message)
    }

    /// A value of the wrong kind: `expected` says what fits (`"int?"`, `"a list"`).
    static func expected(_ expected: String, found kind: String) -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "expected \(expected), found \(kind)", context: ["value.kind": kind])
    }

    /// Text that does not parse as the type it is written to; `format` describes what would.
    static func malformed(_ format: String) -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "expected \(format)")
    }

    /// Null written to a required property of scalar type `type`.
    static func nullInRequired(_ type: ScalarType) -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "null is not allowed in a required \(type.rawValue) property")
    }

    /// A number or date outside what its type can hold; `range` says what can.
    static func outOfRange(_ what: String, range: String) -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "\(what) is outside the supported range (\(range))")
    }

    /// A date a Realm cannot hold (it keeps nanoseconds since 1970 in 64 bits); `what` names it.
    public static func dateOutOfRange(_ what: String) -> RealmAdapterError {
        outOfRange(what, range: "years 1678 to 2261")
    }

    /// A list given to a column that holds one value.
    static func listInSingleValueColumn() -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "a list cannot be stored in a single-value column")
    }

    /// A write to a `linkingObjects` property, which links pointing here compute.
    static func computedProperty(type: String?, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .schemaViolation,
            "'\(type.map { "\($0)." } ?? "")\(property)' is a linkingObjects property, computed from the links "
                + "that point here; it cannot be written",
            context: ["property": property].merging(type.map { ["type": $0] } ?? [:]) { a, _ in a })
    }

    /// An INSERT with no value for a required property that has no default.
    static func requiredValueMissing(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "INSERT \(type) has no value for required property '\(property)' (and it has no default)",
            context: ["type": type, "property": property])
    }

    /// A string holds U+0000, which the store's text and Postgres text cannot keep.
    static func nulInString() -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "a string cannot contain the NUL character (U+0000)")
    }

    /// This error, said of a place: `place` prefixes the message (`"Task.title"`, `"Table t, column c"`),
    /// `context` is added (replacing keys already present), the code and the underlying error stay.
    public func located(_ place: String, _ context: [String: String] = [:]) -> RealmAdapterError {
        var copy = self
        copy.context.merge(context) { _, new in new }
        copy.message = "\(place): \(message)"
        return copy
    }
}
