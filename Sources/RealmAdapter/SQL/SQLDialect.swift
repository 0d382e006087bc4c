/// What a relational connector's SQL looks like where dialects differ: quoting, table names,
/// parameter markers. ``DatabaseWrite/statement(_:conflictTarget:)`` builds the statements of
/// every connector with it, so a connector supplies only these and its wire.
public protocol SQLDialect: Sendable {
    /// An identifier, quoted (`"name"`, with quotes inside doubled).
    func quote(_ identifier: String) -> String
    /// A table's name as statements use it (Postgres: qualified by the schema).
    func table(_ name: String) -> String
    /// The marker of the `n`th parameter, 1-based (`$1` for Postgres, `?` for SQLite).
    func parameter(_ n: Int) -> String
}

extension SQLDialect {
    /// The `n`th parameter, or, when it holds a RealmId that `reference` looks up, the subquery
    /// that finds the row's database key by it.
    public func parameter(_ n: Int, referring reference: KeyReference?) -> String {
        guard let r = reference else { return parameter(n) }
        return "(SELECT \(quote(r.column)) FROM \(table(r.table)) WHERE \(quote(r.byColumn)) = \(parameter(n)))"
    }
}

/// A SQL statement and the values of its parameters, in order. Values are never pasted into
/// the text: they travel as parameters, converted by the connector for its wire.
public struct SQLStatement: Sendable, Hashable {
    public var text: String
    public var values: [Value]
    /// The one write this statement carries out, when it carries out one alone (not a multi-row
    /// batch, not DDL): its count of affected rows then tells whether it missed a row
    /// (``DatabaseWrite/missedRow(affected:)``).
    public var write: DatabaseWrite?

    public init(_ text: String, _ values: [Value] = [], write: DatabaseWrite? = nil) {
        self.text = text
        self.values = values
        self.write = write
    }
}

extension String {
    /// The text between two `quote` characters, each `quote` inside doubled: how SQL quotes
    /// identifiers (`"`, `]`) and literals (`'`). Byte by byte (an ASCII quote never occurs inside
    /// a UTF-8 sequence), without Foundation's `replacingOccurrences`, which bridges to NSString
    /// and cost microseconds per call: a statement per write quoted every column.
    package func sqlQuoted(_ open: Character, _ close: Character) -> String {
        let (o, c) = (open.asciiValue!, close.asciiValue!)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 2)
        out.append(o)
        for b in utf8 {
            out.append(b)
            if b == c { out.append(b) }
        }
        out.append(c)
        return String(decoding: out, as: UTF8.self)
    }
}
