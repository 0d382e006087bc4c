import Foundation
import PostgresWire
import RealmAdapter

/// A plain INSERT of rows of placeholders (`INSERT INTO t (a, b) VALUES (?, ?), (?, ?)`, as the
/// store writes many rows at once), sent as the `COPY t (a, b) FROM STDIN` of the same rows: the
/// server stores rows from `COPY` at about twice the rate of an INSERT's (docs/performance.md).
///
/// Values are written in `COPY`'s text format as they are bound, in the order of their
/// parameters (as the store binds rows): each as the text its parameter would carry, so the same
/// input function of the column's type reads it; bytes as `bytea`'s hex form; NULL as `\N`.
struct PostgresCopyInsert {
    /// The `COPY` statement.
    let sql: String
    /// Values per row, and in all.
    let width: Int
    let count: Int
    /// The rows bound so far, in `COPY`'s text format.
    private(set) var data: [UInt8] = []
    /// The parameter bound next; 1 starts the rows anew.
    private var next = 1
    /// The first parameter bound out of order, if any.
    private(set) var outOfOrder: Int32?

    /// From this many rows on, a `COPY` costs less than the INSERT it replaces (a statement
    /// parsed each time, three round trips more).
    static let fewestRows = 64

    /// The `COPY` of `insert`, or nil when it is not a plain INSERT of bare placeholders (a
    /// conflict clause, an expression, numbered parameters) or has fewer than ``fewestRows`` rows.
    init?(_ insert: String) {
        let text = insert.drop { $0.isWhitespace }
        guard text.hasPrefix("INSERT INTO "), let open = text.firstIndex(of: "("),
            let close = text[open...].firstIndex(of: ")")
        else { return nil }
        let table = text[text.index(text.startIndex, offsetBy: 12)..<open].trimmingCharacters(in: .whitespaces)
        let columns = text[text.index(after: open)..<close]
        let rest = text[text.index(after: close)...].drop { $0.isWhitespace }
        guard table.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }), rest.hasPrefix("VALUES"),
            columns.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "," || $0 == " " })
        else { return nil }
        let values = rest.dropFirst(6)
        guard values.allSatisfy({ "?(), \n".contains($0) }) else { return nil }
        width = columns.split(separator: ",").count
        count = values.count(where: { $0 == "?" })
        guard width > 0, count % width == 0, count / width >= Self.fewestRows,
            values.count(where: { $0 == "(" }) == count / width
        else { return nil }
        sql = "COPY \(table) (\(columns)) FROM STDIN"
    }

    /// Whether every parameter was bound, in order.
    var isComplete: Bool { outOfOrder == nil && next == count + 1 }

    /// Forgets the rows bound, and their memory (a statement may be kept long after its run).
    mutating func clear() {
        data = []
        (next, outOfOrder) = (1, nil)
    }

    /// Binds parameter `index`, which `write` appends in `COPY`'s text format (when it throws,
    /// the rows are not sent until bound anew).
    mutating func bind(at index: Int32, _ write: (inout [UInt8]) throws -> Void) rethrows {
        if index == 1 { clear() }
        guard Int(index) == next, outOfOrder == nil else {
            outOfOrder = outOfOrder ?? index
            return
        }
        do { try write(&data) } catch {
            outOfOrder = index
            throw error
        }
        data.append(UInt8(ascii: next % width == 0 ? "\n" : "\t"))
        next += 1
    }

    // MARK: Values in COPY's text format

    static func append(_ value: StoredValue, to out: inout [UInt8]) {
        switch value {
        case .null: out += [UInt8(ascii: "\\"), UInt8(ascii: "N")]
        case .integer(let n): out += String(n).utf8
        case .real(let d):
            guard let text = PostgresType.encode(.double(d)) else { return append(.null, to: &out) }
            append(text: text, to: &out)
        case .text(let s): append(text: s, to: &out)
        case .blob(let b): b.withUnsafeBytes { append(bytes: $0, to: &out) }
        }
    }

    /// A key as ``PostgresKeyCodec`` encodes it, in `bytea`'s hex form.
    static func append(key: StoredValue, to out: inout [UInt8]) throws {
        let start = out.count
        out += [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")]
        let some = try PostgresKeyCodec.encode(key) { byte in
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0xF)])
        }
        if !some {
            out.removeSubrange(start...)
            append(StoredValue.null, to: &out)
        }
    }

    /// Text, its backslashes, tabs and line ends escaped.
    static func append(text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out += [byte, byte]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            default: out.append(byte)
            }
        }
    }

    /// `bytea`'s hex form (`\x…`), its backslash escaped.
    static func append(bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out += [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")]
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0xF)])
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
