import RealmAdapter

/// A run of upserts or inserts sent as `COPY … FROM STDIN` in text format: Postgres stores
/// such rows at about three times the rate of the same `INSERT … ON CONFLICT` (the speculative
/// insertion of `ON CONFLICT` and the parsing of the rows' JSON cost it more than the rows).
///
/// A Realm INSERT's row is almost always new to the database. When one is not (a key taken, or
/// `COPY` refused: row-level security, say), the `COPY` fails as a whole; it runs inside a
/// savepoint, is rolled back to it, and the run goes as the upsert it stands for
/// (``PostgresConnector``'s apply), with the same outcome.
struct CopyRun: Sendable {
    /// `COPY "schema"."table" ("a", "b") FROM STDIN`.
    let sql: String
    private let run: [DatabaseWrite]
    private let shape: PostgresWrites.RunShape
    var rows: Int { run.count }

    init(_ shape: PostgresWrites.RunShape, _ run: [DatabaseWrite], schema: String) {
        let dialect = PostgresDialect(schema: schema)
        sql =
            "COPY \(dialect.table(shape.table)) (\(shape.columns.map(dialect.quote).joined(separator: ", "))) "
            + "FROM STDIN"
        self.run = run
        self.shape = shape
    }

    /// Hands the rows, in `COPY`'s text format, to `send` in pieces of about 64 KiB as they are
    /// encoded: Postgres parses and stores one piece while the next is made.
    func write(_ send: (UnsafeRawBufferPointer) throws -> Void) throws {
        let piece = 1 << 16
        var data: [UInt8] = []
        data.reserveCapacity(piece + 4096)
        for w in run {
            // A run of upserts or inserts: the row is taken out of its write once, not per column.
            let row: [String: Value]? =
                switch w {
                case .upsert(_, _, let r, _), .insert(_, let r): r.values
                default: nil
                }
            for (c, column) in shape.columns.enumerated() {
                if c > 0 { data.append(UInt8(ascii: "\t")) }
                Self.appendField(row.map { $0[column] ?? .null } ?? shape.value(column, of: w), to: &data)
            }
            data.append(UInt8(ascii: "\n"))
            if data.count >= piece {
                try data.withUnsafeBytes(send)
                data.removeAll(keepingCapacity: true)
            }
        }
        if !data.isEmpty { try data.withUnsafeBytes(send) }
    }

    /// The statement the run stands for: `planned`'s text with its rows as its parameter.
    func fallback(_ planned: SQLStatement) -> SQLStatement {
        SQLStatement(planned.text, [PostgresWrites.bulkJSON(run, shape)])
    }

    /// Appends a value as a field of `COPY`'s text format: the text Postgres parses
    /// (``PostgresType/encode(_:)``) with backslash, tab, newline and carriage return escaped,
    /// or `\N` for NULL.
    static func appendField(_ value: Value, to data: inout [UInt8]) {
        func escaped(_ text: String) {
            for b in text.utf8 {
                switch b {
                case UInt8(ascii: "\\"): data += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case UInt8(ascii: "\t"): data += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case UInt8(ascii: "\n"): data += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case UInt8(ascii: "\r"): data += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                default: data.append(b)
                }
            }
        }
        switch value {
        case .null: data += [UInt8(ascii: "\\"), UInt8(ascii: "N")]
        case .int(let i): data += String(i).utf8
        case .string(let s): escaped(s)
        default:
            if let text = PostgresType.encode(value) {
                escaped(text)
            } else {
                data += [UInt8(ascii: "\\"), UInt8(ascii: "N")]
            }
        }
    }
}
