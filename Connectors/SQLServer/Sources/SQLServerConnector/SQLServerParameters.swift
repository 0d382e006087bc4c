import CFreeTDS
import Foundation
import RealmAdapter

/// A statement with values as one `sp_executesql` call: the text, the declaration of its
/// parameters and their values in db-lib's wire types.
///
/// db-lib takes a value of length 0 for NULL, whatever its type, so an empty string or empty
/// binary cannot travel as a parameter: it is sent as NULL and the statement begins by setting
/// the parameter (`SET @p2 = N'';`). Types travel as few wire types (bigint, float, bit,
/// nvarchar, varbinary); the server converts them to the columns' types where they are used.
struct SQLServerParameters {
    /// The parameters of one call, at most (`sp_executesql`'s own two count towards SQL
    /// Server's limit of 2,100).
    static let limit = 2_098

    enum Wire: Equatable {
        case null
        case int(Int64)
        case double(Double)
        case bit(Bool)
        case text(String)
        case binary(Data)
    }

    let text: String
    let declarations: String
    let values: [Wire]

    init(_ statement: SQLStatement) throws {
        guard statement.values.count <= Self.limit else {
            throw SQLServerError.invalidSetting(
                "loader.batchSize", "a statement of \(statement.values.count) parameters is over SQL Server's limit")
        }
        var declarations: [String] = []
        var values: [Wire] = []
        var prelude: [String] = []
        for (i, value) in statement.values.enumerated() {
            let name = "@p\(i + 1)"
            let (type, wire) = try Self.wire(value)
            declarations.append("\(name) \(type)")
            switch wire {
            case .text(let t) where t.isEmpty:
                prelude.append("SET \(name) = N'';")
                values.append(.null)
            case .binary(let d) where d.isEmpty:
                prelude.append("SET \(name) = 0x;")
                values.append(.null)
            default:
                values.append(wire)
            }
        }
        self.text = (prelude + [statement.text]).joined(separator: " ")
        self.declarations = declarations.joined(separator: ", ")
        self.values = values
    }

    /// The declared type and wire form of a value.
    static func wire(_ v: Value) throws -> (String, Wire) {
        switch v {
        case .null: ("nvarchar(max)", .null)
        case .bool(let b): ("bit", .bit(b))
        case .int(let i): ("bigint", .int(i))
        case .float(let f): ("float", .double(Double(f)))
        case .double(let d): ("float", .double(d))
        case .string(let s): ("nvarchar(max)", .text(s))
        case .data(let d): ("varbinary(max)", .binary(d))
        // Declared datetime2(7), which every date and time column takes (Babelfish assigns no
        // nvarchar to a datetimeoffset): UTC, no zone designator, 100 ns (its precision).
        case .date(let t): ("datetime2(7)", .text(Self.datetime2(t)))
        case .decimal(let d): ("nvarchar(80)", .text(d.description))
        case .uuid(let u): ("nvarchar(36)", .text(u.uuidString))
        case .objectId(let o): ("nvarchar(24)", .text(o.description))
        case .list: throw SQLServerError.unsupportedValue("list")
        }
    }

    /// `t` as `datetime2(7)` reads it: `2024-05-01T10:20:30.1234567` (fractions past 100 ns cut).
    static func datetime2(_ t: Timestamp) -> String {
        let iso = t.iso8601.dropLast(t.iso8601.hasSuffix("Z") ? 1 : 0)
        guard let dot = iso.firstIndex(of: ".") else { return String(iso) }
        return String(iso[..<dot]) + String(iso[dot...].prefix(8))
    }

    /// The wire type of text of `bytes` UTF-8 bytes. db-lib sends `SYBVARCHAR` as `nvarchar`,
    /// which holds 8,000 bytes: longer text was cut there (a multi-byte character cut in two
    /// failed the call; ASCII was cut silently). Longer text goes as `SYBNTEXT`, which FreeTDS
    /// sends as `nvarchar(max)`. UTF-8 never has fewer bytes than UTF-16 has code units, so
    /// 4,000 UTF-8 bytes always fit.
    static func textType(_ bytes: Int) -> Int32 { Int32(bytes > 4_000 ? SYBNTEXT : SYBVARCHAR) }

    /// Sends the call; the parameters' bytes stay alive until `dbrpcsend` has copied them.
    func send(_ process: OpaquePointer) throws -> Bool {
        var buffers: [[UInt8]] = [Array(text.utf8), Array(declarations.utf8)]
        for v in values {
            switch v {
            case .null: buffers.append([])
            case .int(let i): buffers.append(withUnsafeBytes(of: i) { Array($0) })
            case .double(let d): buffers.append(withUnsafeBytes(of: d) { Array($0) })
            case .bit(let b): buffers.append([b ? 1 : 0])
            case .text(let t): buffers.append(Array(t.utf8))
            case .binary(let d): buffers.append(Array(d))
            }
        }
        guard dbrpcinit(process, "sp_executesql", 0) == SUCCEED else { return false }
        func parameter(_ name: String, _ type: Int32, _ length: Int32, _ bytes: UnsafeMutablePointer<UInt8>?) -> Bool {
            dbrpcparam(process, name, 0, type, -1, length, bytes) == SUCCEED
        }
        return withPointers(to: buffers) { pointers in
            guard parameter("@stmt", Self.textType(buffers[0].count), Int32(buffers[0].count), pointers[0]),
                parameter("@params", Self.textType(buffers[1].count), Int32(buffers[1].count), pointers[1])
            else { return false }
            for (i, v) in values.enumerated() {
                let p = pointers[i + 2]
                let n = Int32(buffers[i + 2].count)
                let ok =
                    switch v {
                    case .null: parameter("@p\(i + 1)", Int32(SYBVARCHAR), 0, nil)
                    case .int: parameter("@p\(i + 1)", Int32(SYBINT8), -1, p)
                    case .double: parameter("@p\(i + 1)", Int32(SYBFLT8), -1, p)
                    case .bit: parameter("@p\(i + 1)", Int32(SYBBITN), 1, p)
                    case .text: parameter("@p\(i + 1)", Self.textType(Int(n)), n, p)
                    case .binary: parameter("@p\(i + 1)", Int32(n > 8_000 ? SYBIMAGE : SYBVARBINARY), n, p)
                    }
                guard ok else { return false }
            }
            return dbrpcsend(process) == SUCCEED
        }
    }

    private func withPointers<R>(
        to buffers: [[UInt8]], _ body: ([UnsafeMutablePointer<UInt8>?]) throws -> R
    ) rethrows -> R {
        let copies = buffers.map { bytes -> UnsafeMutablePointer<UInt8>? in
            guard !bytes.isEmpty else { return nil }
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
            p.initialize(from: bytes, count: bytes.count)
            return p
        }
        defer { for p in copies { p?.deallocate() } }
        return try body(copies)
    }
}
