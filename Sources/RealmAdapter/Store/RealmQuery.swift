import Foundation

/// A filter in a documented subset of the Realm query language, parsed against a type:
/// comparisons (`==` `=` `!=` `<>` `<` `<=` `>` `>=`), `BEGINSWITH` `ENDSWITH` `CONTAINS` `LIKE`
/// (`*` any characters, `?` one) with `[c]` for case-insensitive (ASCII letters), `AND` `OR`
/// `NOT` (or `&&` `||` `!`), parentheses, `TRUEPREDICATE` `FALSEPREDICATE`, and key paths through
/// links (`owner.name == 'Ann'`; through a list of links, any element: `stops.name == 'Mill'`).
/// Values are numbers, strings in single or double quotes, `true`, `false` and `null` (`nil`),
/// coerced to the property's type (`date` from ISO 8601 text).
///
/// It runs in SQLite (``RealmStore/objects(of:in:_:)`` with ``ObjectQuery/filter``): see
/// `RealmQuery+SQL.swift`.
public indirect enum RealmQuery: Sendable, Hashable {
    case always(Bool)
    case not(RealmQuery)
    case and(RealmQuery, RealmQuery)
    case or(RealmQuery, RealmQuery)
    /// `path` (the properties from the type, links then the compared property) `op` `value`.
    case compare(path: [String], op: Operator, value: Value, caseInsensitive: Bool)

    public enum Operator: String, Sendable, Hashable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"

        var isText: Bool { [.beginsWith, .endsWith, .contains, .like].contains(self) }
    }

    /// Parses `text` as a filter on objects of `type` in `schema`: key paths must name its
    /// properties (through links), and values must suit them.
    public init(_ text: String, type: ObjectSchema, schema: Schema) throws {
        var parser = Parser(text: text, type: type, schema: schema)
        self = try parser.expression()
        guard parser.atEnd else { throw parser.error("unexpected '\(parser.rest.prefix(20))'") }
    }

    struct Parser {
        /// How deep brackets and negations may nest, and how many conditions a query may have: a
        /// query from a client must not take the parser's stack, or SQLite's, whatever its size.
        static let maxNesting = 32
        static let maxConditions = 500

        let chars: [Character]
        var at = 0
        var nesting = 0
        var conditions = 0
        let type: ObjectSchema
        let schema: Schema
        let text: String

        init(text: String, type: ObjectSchema, schema: Schema) {
            self.text = text
            chars = Array(text)
            self.type = type
            self.schema = schema
        }

        var atEnd: Bool {
            mutating get {
                skipSpace()
                return at == chars.count
            }
        }
        var rest: String { String(chars[at...]) }

        func error(_ message: String, at position: Int? = nil) -> RealmAdapterError {
            RealmAdapterError.badQuery(text, at: position ?? at, message)
        }

        mutating func skipSpace() { while at < chars.count, chars[at].isWhitespace { at += 1 } }

        /// Consumes `word` (letters: case-insensitive, and not the start of a longer name).
        mutating func take(_ word: String) -> Bool {
            skipSpace()
            let w = Array(word)
            guard at + w.count <= chars.count else { return false }
            for (i, c) in w.enumerated() where chars[at + i].uppercased() != c.uppercased() { return false }
            if w.last!.isLetter, at + w.count < chars.count,
                chars[at + w.count].isLetter || chars[at + w.count].isNumber || chars[at + w.count] == "_"
            {
                return false
            }
            at += w.count
            return true
        }

        mutating func expression() throws -> RealmQuery {
            var left = try conjunction()
            while take("||") || take("OR") { left = .or(left, try conjunction()) }
            return left
        }

        mutating func conjunction() throws -> RealmQuery {
            var left = try negation()
            while take("&&") || take("AND") { left = .and(left, try negation()) }
            return left
        }

        mutating func negation() throws -> RealmQuery {
            if take("NOT") || (peekBang() && take("!")) { return .not(try nested { try $0.negation() }) }
            return try primary()
        }

        /// `body` one level deeper (a bracket or a negation), within ``maxNesting``.
        mutating func nested(_ body: (inout Parser) throws -> RealmQuery) throws -> RealmQuery {
            guard nesting < Self.maxNesting else {
                throw error("brackets and negations nest more than \(Self.maxNesting) deep")
            }
            nesting += 1
            defer { nesting -= 1 }
            return try body(&self)
        }

        /// A `!` that is not the start of `!=`.
        mutating func peekBang() -> Bool {
            skipSpace()
            return at < chars.count && chars[at] == "!" && (at + 1 == chars.count || chars[at + 1] != "=")
        }

        mutating func primary() throws -> RealmQuery {
            if take("(") {
                let inner = try nested { try $0.expression() }
                guard take(")") else { throw error("expected ')'") }
                return inner
            }
            conditions += 1
            guard conditions <= Self.maxConditions else {
                throw error("a query has at most \(Self.maxConditions) conditions")
            }
            if take("TRUEPREDICATE") { return .always(true) }
            if take("FALSEPREDICATE") { return .always(false) }
            let (path, property) = try keyPath()
            let op = try comparison()
            var caseInsensitive = false
            if take("[c]") { caseInsensitive = true }
            let literal = try value()
            return .compare(
                path: path, op: op, value: try coerce(literal, to: property, op: op, path: path),
                caseInsensitive: caseInsensitive)
        }

        mutating func comparison() throws -> Operator {
            for (word, op) in [
                ("==", Operator.equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<=", .lessOrEqual),
                (">=", .greaterOrEqual), ("<", .less), (">", .greater), ("BEGINSWITH", .beginsWith),
                ("ENDSWITH", .endsWith), ("CONTAINS", .contains), ("LIKE", .like),
            ] where take(word) {
                return op
            }
            throw error("expected a comparison (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE)")
        }

        /// A key path from the type, through links, to a property of a single value.
        mutating func keyPath() throws -> ([String], Property) {
            var current = type
            var path: [String] = []
            while true {
                skipSpace()
                let start = at
                let name = try identifier()
                guard let p = current.properties.first(where: { $0.name == name }), p.type.isStored else {
                    throw error("\(current.name) has no property '\(name)'", at: start)
                }
                path.append(name)
                skipSpace()
                guard at < chars.count, chars[at] == "." else {
                    if p.type.linkTarget != nil {
                        throw error("\(current.name).\(name) is a link: name a property of it")
                    }
                    if p.type.isList {
                        throw error("\(current.name).\(name) is a list of values: it cannot be compared")
                    }
                    return (path, p)
                }
                at += 1
                guard let target = p.type.linkTarget, let next = schema[type: target] else {
                    throw error("\(current.name).\(name) is not a link: it has no properties to follow")
                }
                current = next
            }
        }

        mutating func identifier() throws -> String {
            skipSpace()
            let start = at
            while at < chars.count, chars[at].isLetter || chars[at].isNumber || chars[at] == "_" { at += 1 }
            guard at > start else { throw error("expected a property name") }
            return String(chars[start..<at])
        }

        mutating func value() throws -> Value {
            skipSpace()
            guard at < chars.count else { throw error("expected a value") }
            let c = chars[at]
            if c == "'" || c == "\"" {
                at += 1
                var s = ""
                while at < chars.count, chars[at] != c {
                    if chars[at] == "\\", at + 1 < chars.count { at += 1 }
                    s.append(chars[at])
                    at += 1
                }
                guard at < chars.count else { throw error("a string is not closed") }
                at += 1
                return .string(s)
            }
            if take("true") { return .bool(true) }
            if take("false") { return .bool(false) }
            if take("null") || take("nil") { return .null }
            let start = at
            while at < chars.count, chars[at].isNumber || "+-.eE".contains(chars[at]) { at += 1 }
            let number = String(chars[start..<at])
            if let i = Int64(number) { return .int(i) }
            // Read as JSON reads a number (the one rule): many digits kept, underflow refused.
            if Double(number) != nil, !number.isEmpty {
                do { return try Value(json: try JSONValue(parsing: number)) } catch let e as RealmAdapterError {
                    throw error("\(number): \(e.message)")
                }
            }
            at = start
            throw error("expected a value (a number, a quoted string, true, false or null)")
        }

        func coerce(_ v: Value, to p: Property, op: Operator, path: [String]) throws -> Value {
            let name = path.joined(separator: ".")
            if v.isNull {
                guard op == .equal || op == .notEqual else { throw error("\(name): null compares only with == or !=") }
                return .null
            }
            guard case .scalar(let s) = p.type else {
                throw error("\(name) cannot be compared")
            }
            if op.isText {
                guard s == .string, case .string = v else {
                    throw error("\(op.rawValue) compares strings: \(name) is \(s)")
                }
            }
            do {
                return try v.coerced(to: s, optional: false)
            } catch let e as RealmAdapterError {
                throw error("\(name): \(e.message)")
            }
        }
    }
}

extension RealmAdapterError {
    /// The query is quoted up to 200 characters (a client's query may be large).
    static func badQuery(_ text: String, at position: Int, _ message: String) -> RealmAdapterError {
        let quoted = text.count > 200 ? text.prefix(200) + "…" : text[...]
        return RealmAdapterError(
            .invalidValue, "query '\(quoted)', at character \(position + 1): \(message).",
            context: ["query.position": "\(position + 1)"])
    }
}
