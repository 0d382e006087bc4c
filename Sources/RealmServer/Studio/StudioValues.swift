import Foundation
import RealmAdapter

/// Values as Studio shows them (text, links as their target's key, lists as counts) and as its
/// forms send them back.
enum StudioValues {
    /// A value as text: a string as it is, anything else as JSON.
    static func text(_ value: Value) -> String {
        if case .string(let s) = value.json { return s }
        return value.json.serialized()
    }

    /// What an edit box holds for `value`.
    static func editable(_ value: Value) -> String { text(value) }

    /// A table cell: the text, whether it is null, a link's target, a list's count and items.
    static func cell(_ value: Value, _ p: Property, path: String) -> [String: Any] {
        if value.isNull { return ["isNull": true, "isList": false, "target": false] }
        if case .list(let items) = value {
            return [
                "isNull": false, "isList": true, "count": items.count, "items": items.map { item($0, p, path: path) },
                "target": false,
            ]
        }
        return item(value, p, path: path)
    }

    static func item(_ value: Value, _ p: Property, path: String) -> [String: Any] {
        // Every key set, true or not: Mustache looks a missing one up in the enclosing contexts.
        let target = p.type.linkTarget.map { Studio.objectLink(path, $0, value) }
        return ["text": text(value), "target": target ?? false, "isNull": false, "isList": false]
    }

    /// What a form's text means for `p`: a string property takes it as it is; any other parses it
    /// as JSON when it can (numbers, true, false), and otherwise as a string (dates, decimals,
    /// ids), and the value rule decides whether it fits.
    static func json(from text: String, for p: Property, in schema: Schema) -> JSONValue {
        if case .scalar(.string) = p.type { return .string(text) }
        // A link is its target's key: text as it is when the key is a string.
        if case .link(let target) = p.type, case .scalar(.string)? = schema[type: target]?.primaryKeyProperty?.type {
            return .string(text)
        }
        if let json = try? JSONValue(parsing: Data(text.utf8)), !(json.isContainer) { return json }
        return .string(text)
    }
}

extension JSONValue {
    fileprivate var isContainer: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }
}
