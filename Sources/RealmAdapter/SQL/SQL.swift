/// SQL text whose names and values stay apart from it until a dialect renders it, so no
/// identifier goes unquoted and no value is pasted into the text.
///
/// ```swift
/// let sql: SQL = "SELECT \(id: "path") FROM \(table: "realm_adapter_state") WHERE adapter = \(name)"
/// let statement = dialect.statement(sql)  // SELECT "path" FROM "public"."realm_adapter_state" WHERE adapter = $1
/// ```
///
/// - `\(value)` binds a parameter (a ``Value``, `String`, `Int64` or `Int`).
/// - `\(id: name)` quotes an identifier; `\(ids: names)` a comma-separated list of them.
/// - `\(table: name)` is a table as the dialect names it (Postgres: qualified by the schema).
/// - `\(literal: text)` is a quoted string literal, for the few places that take no parameter
///   (DDL options, replication commands).
/// - `\(sql: other)` embeds another `SQL`; `\(raw: text)` pastes text the program wrote itself
///   (a type name, a keyword), never a name or a value from outside.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    enum Part: Sendable, Hashable {
        case text(String)
        case identifier(String)
        case table(String)
        case literal(String)
        case value(Value)
    }

    var parts: [Part]

    public init(stringLiteral value: String) { parts = [.text(value)] }

    public init(stringInterpolation: StringInterpolation) { parts = stringInterpolation.parts }

    public struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) { parts.append(.text(literal)) }
        public mutating func appendInterpolation(_ value: Value) { parts.append(.value(value)) }
        public mutating func appendInterpolation(_ value: String) { parts.append(.value(.string(value))) }
        public mutating func appendInterpolation(_ value: Int64) { parts.append(.value(.int(value))) }
        public mutating func appendInterpolation(_ value: Int) { parts.append(.value(.int(Int64(value)))) }
        public mutating func appendInterpolation(id name: String) { parts.append(.identifier(name)) }
        public mutating func appendInterpolation(table name: String) { parts.append(.table(name)) }
        public mutating func appendInterpolation(literal text: String) { parts.append(.literal(text)) }
        public mutating func appendInterpolation(raw text: String) { parts.append(.text(text)) }
        public mutating func appendInterpolation(sql: SQL) { parts += sql.parts }

        public mutating func appendInterpolation(ids names: [String]) {
            for (i, name) in names.enumerated() {
                if i > 0 { parts.append(.text(", ")) }
                parts.append(.identifier(name))
            }
        }
    }

    /// Pieces joined by `separator`, as one `SQL`.
    public static func joined(_ pieces: [SQL], separator: String) -> SQL {
        var out = SQL(stringLiteral: "")
        for (i, piece) in pieces.enumerated() {
            if i > 0 { out.parts.append(.text(separator)) }
            out.parts += piece.parts
        }
        return out
    }
}

extension SQLDialect {
    /// The statement `sql` makes in this dialect: names quoted, values as numbered parameters.
    public func statement(_ sql: SQL) -> SQLStatement {
        var text = ""
        var values: [Value] = []
        for part in sql.parts {
            switch part {
            case .text(let t): text += t
            case .identifier(let name): text += quote(name)
            case .table(let name): text += table(name)
            case .literal(let t): text += t.sqlQuoted("'", "'")
            case .value(let v):
                values.append(v)
                text += parameter(values.count)
            }
        }
        return SQLStatement(text, values)
    }
}
