import GraphQL
import Synchronization

/// What one request may ask of the server: nesting through links multiplies the objects an
/// answer holds, so depth, the number of fields, and the objects resolved are bounded, and a
/// request past them gets a GraphQL error saying which limit and what to do.
enum GraphQLLimits {
    /// Selections nested deeper than this are refused before anything runs.
    static let maxDepth = 12
    /// Fields (aliases included, fragments expanded) in one request.
    static let maxFields = 2_000
    /// Objects one answer may hold, counted as they are read.
    static let maxObjects = 100_000

    /// Brackets (`{`, `[`, `(`) nested in a request's text, and fragments spread within one
    /// another: GraphQL's parser and validation recurse once per level, and a request thousands of
    /// levels deep would overflow the stack (a crash, before any token is checked).
    static let maxNesting = 64

    /// Arguments of one field or directive, directives in one place, fields of one input object,
    /// variables of one operation: GraphQL's validation compares them pairwise, and a probe froze
    /// the server for every user with two requests of 160 KB (10,000 directives on one field).
    static let maxPerPlace = 100
    /// Operations and fragments in one request (validated pairwise too).
    static let maxDefinitions = 100

    /// The request `text` parsed, if it nests no deeper than ``maxNesting``, and ``check(_:)``ed.
    static func parse(_ text: String) throws -> Document {
        try checkNesting(text)
        let document = try GraphQL.parse(source: Source(body: text))
        try check(document)
        try checkBreadth(document)
        return document
    }

    /// Refuses a request with more than ``maxDefinitions`` operations and fragments, more than
    /// ``maxPerPlace`` of anything in one place, or more than ``maxFields`` fields written out
    /// (fragments not spread included: validation reads them all), before validation runs.
    static func checkBreadth(_ document: Document) throws {
        guard document.definitions.count <= maxDefinitions else {
            throw GraphQLError(
                message: "The request has more than \(maxDefinitions) operations and fragments: send fewer.")
        }
        var written = 0
        func place(_ count: Int, _ what: String) throws {
            guard count <= maxPerPlace else {
                throw GraphQLError(
                    message: "The request has more than \(maxPerPlace) \(what) in one place: send fewer.")
            }
        }
        func value(_ v: GraphQL.Value) throws {
            if let o = v as? ObjectValue {
                try place(o.fields.count, "input fields")
                for f in o.fields { try value(f.value) }
            } else if let l = v as? ListValue {
                for item in l.values { try value(item) }
            }
        }
        func arguments(_ arguments: [Argument]) throws {
            try place(arguments.count, "arguments")
            for a in arguments { try value(a.value) }
        }
        func directives(_ directives: [Directive]) throws {
            try place(directives.count, "directives")
            for d in directives { try arguments(d.arguments) }
        }
        func selections(_ set: SelectionSet) throws {
            for selection in set.selections {
                switch selection {
                case let field as Field:
                    written += 1
                    guard written <= maxFields else {
                        throw tooManyFields()
                    }
                    try arguments(field.arguments)
                    try directives(field.directives)
                    if let inner = field.selectionSet { try selections(inner) }
                case let spread as FragmentSpread:
                    try directives(spread.directives)
                case let inline as InlineFragment:
                    try directives(inline.directives)
                    try selections(inline.selectionSet)
                default:
                    continue
                }
            }
        }
        for definition in document.definitions {
            if let o = definition as? OperationDefinition {
                try place(o.variableDefinitions.count, "variables")
                try directives(o.directives)
                try selections(o.selectionSet)
            } else if let f = definition as? FragmentDefinition {
                try directives(f.directives)
                try selections(f.selectionSet)
            }
        }
    }

    /// Refuses `text` if its brackets nest deeper than ``maxNesting``, counted outside strings,
    /// block strings and comments (as GraphQL's lexer reads them), before the parser sees it.
    static func checkNesting(_ text: String) throws {
        let quote = UInt8(ascii: "\"")
        let b = Array(text.utf8)
        func tripleQuote(_ i: Int) -> Bool {
            i + 2 < b.count && b[i] == quote && b[i + 1] == quote && b[i + 2] == quote
        }
        var (i, depth) = (0, 0)
        while i < b.count {
            switch b[i] {
            case quote where tripleQuote(i):
                // A block string: it ends at the first """; \""" is an escaped one (4 bytes of content).
                i += 3
                while i < b.count, !tripleQuote(i) {
                    i += b[i] == UInt8(ascii: "\\") && tripleQuote(i + 1) ? 4 : 1
                }
                i += 2
            case quote:
                i += 1
                while i < b.count, b[i] != quote, b[i] != UInt8(ascii: "\n") {
                    i += b[i] == UInt8(ascii: "\\") ? 2 : 1
                }
            case UInt8(ascii: "#"):
                while i < b.count, b[i] != UInt8(ascii: "\n"), b[i] != UInt8(ascii: "\r") { i += 1 }
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "("):
                depth += 1
                guard depth <= maxNesting else {
                    throw GraphQLError(
                        message: "The request nests brackets deeper than \(maxNesting) levels: ask for less at once.")
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"):
                depth = max(0, depth - 1)  // a closer too many is the parser's error, not credit
            default:
                break
            }
            i += 1
        }
    }

    /// A request with more than ``maxFields`` fields, written out or with fragments expanded.
    static func tooManyFields() -> GraphQLError {
        GraphQLError(message: "The request asks for more than \(maxFields) fields: split it.")
    }

    /// Refuses a request whose selections nest deeper than ``maxDepth`` or that asks for more
    /// than ``maxFields`` fields. Introspection (`__schema`, `__type`) reads the schema, not
    /// objects, so its depth is not limited: clients' standard introspection query nests its
    /// type references deeper than any object query needs.
    static func check(_ document: Document) throws {
        var fragments: [String: SelectionSet] = [:]
        for case let f as FragmentDefinition in document.definitions { fragments[f.name.value] = f.selectionSet }
        var fields = 0
        func depth(_ set: SelectionSet, _ level: Int, _ spreading: Set<String>) throws -> Int {
            guard level <= maxDepth || level == .max else {
                throw GraphQLError(
                    message: "The request nests selections deeper than \(maxDepth) levels: ask for less at once.")
            }
            var deepest = level
            for selection in set.selections {
                switch selection {
                case let field as Field:
                    fields += 1
                    guard fields <= maxFields else {
                        throw tooManyFields()
                    }
                    guard let inner = field.selectionSet else { continue }
                    let next = field.name.value.hasPrefix("__") || level == .max ? Int.max : level + 1
                    deepest = max(deepest, try depth(inner, next, spreading))
                case let spread as FragmentSpread:
                    let name = spread.name.value
                    // A fragment that spreads itself is an error GraphQL's validation names.
                    guard !spreading.contains(name), let inner = fragments[name] else { continue }
                    guard spreading.count < maxNesting else {
                        throw GraphQLError(
                            message: "The request spreads fragments within one another deeper than \(maxNesting) "
                                + "levels: spread fewer.")
                    }
                    deepest = max(deepest, try depth(inner, level, spreading.union([name])))
                case let inline as InlineFragment:
                    deepest = max(deepest, try depth(inline.selectionSet, level, spreading))
                default:
                    continue
                }
            }
            return deepest
        }
        for case let operation as OperationDefinition in document.definitions {
            _ = try depth(operation.selectionSet, 1, [])
        }
    }
}

/// The objects an answer has read so far (``GraphQLLimits/maxObjects``).
final class ObjectBudget: Sendable {
    private let used = Mutex(0)

    func spend(_ n: Int) throws {
        let total = used.withLock {
            $0 += n
            return $0
        }
        guard total <= GraphQLLimits.maxObjects else {
            throw GraphQLError(
                message: "The answer would hold more than \(GraphQLLimits.maxObjects) objects: page with take and "
                    + "skip, or nest less.")
        }
    }
}
