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
        RealmAdapterError(
            .invalidValue,
            "a string cannot contain the NUL character (U+0000): the store and Postgres text cannot keep it "
                + "(remove it, or use a data property for binary content)")
    }

    /// A number so small that `type` would hold it as zero.
    static func roundsToZero(_ type: String) -> RealmAdapterError {
        RealmAdapterError(.invalidValue, "the number is too small for \(type): it would be stored as 0")
    }

    /// An int that arrived as a floating-point number from 2^53 on, where doubles skip integers.
    static func intRoundedAsDouble() -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "an int of 2^53 (9007199254740992) or more sent as a floating-point number may already have "
                + "been rounded: send it as an integer")
    }

    /// An integral number outside the 64 bits of an int.
    static func intOutOfRange() -> RealmAdapterError {
        outOfRange("the number", range: "-9223372036854775808 to 9223372036854775807 for an int")
    }

    /// A decimal that arrived as a floating-point number with more digits than a double keeps.
    static func decimalRoundedAsDouble() -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue,
            "a decimal sent as a floating-point number keeps at most 15 significant digits: send it as "
                + "text (\"12345678901234567890.12\") to keep every digit")
    }

    /// A date at second 60: a Realm's dates, as Postgres's and Unix time, have no leap seconds.
    static func leapSecond() -> RealmAdapterError {
        RealmAdapterError(
            .invalidValue, "a leap second (:60) cannot be stored: dates have no leap seconds; use :59.999999999")
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
