import Foundation
import TestSupport

@testable import RealmAdapter

/// A value as a user sends it in an instruction's JSON, ordinary or hostile, with what it means
/// worked out here (Foundation's parsers, components it was made from), not by the product's.
struct ValueSample: CustomStringConvertible, Sendable {
    enum Kind: String, CaseIterable, Sendable {
        case string, int, float, double, decimal, data, date, bool, uuid

        var canBePrimaryKey: Bool { self == .string || self == .int || self == .uuid }
    }

    /// What a write of the sample must do.
    enum Expectation: Sendable { case stored, refused, storedOrRefused }

    let kind: Kind
    /// The JSON text, as it appears in the instruction.
    let json: String
    let expectation: Expectation
    /// Whether a stored value is the sample's value.
    let means: @Sendable (Value) -> Bool

    var description: String { "\(kind.rawValue) \(json.debugDescription)" }

    var jsonValue: JSONValue? { try? JSONValue(parsing: json) }

    init(_ kind: Kind, json: String, _ expectation: Expectation, means: @escaping @Sendable (Value) -> Bool) {
        self.kind = kind
        self.json = json
        self.expectation = expectation
        self.means = means
    }

    /// A refused sample: nothing it could be stored as is right.
    static func refused(_ kind: Kind, _ json: String) -> ValueSample {
        ValueSample(kind, json: json, .refused) { _ in false }
    }

    init(_ kind: Kind, seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let makers = Self.makers[kind]!
        self = makers[Int(rng.next() % UInt64(makers.count))](&rng)
    }

    static let makers: [Kind: [@Sendable (inout SeededGenerator) -> ValueSample]] = [
        .string: strings, .int: ints, .float: floats, .double: doubles, .decimal: decimals, .data: data,
        .date: dates, .bool: bools, .uuid: uuids,
    ]

    static func quoted(_ s: String) -> String { JSONValue.string(s).serialized() }

    // MARK: Kinds

    static let strings: [@Sendable (inout SeededGenerator) -> ValueSample] = [
        { r in
            let s = r.text()
            return ValueSample(.string, json: quoted(s), .stored) { $0 == .string(s) }
        },
        { r in
            var s = r.text()
            s.insert("\u{0}", at: s.index(s.startIndex, offsetBy: Int(r.next() % UInt64(s.count + 1))))
            return .refused(.string, quoted(s))
        },
        { _ in .refused(.string, #"{"x": 1}"#) },
        { _ in .refused(.string, "12") },
        { _ in ValueSample(.string, json: quoted("e\u{301}"), .stored) { $0 == .string("e\u{301}") } },
    ]

    static let ints: [@Sendable (inout SeededGenerator) -> ValueSample] = [
        { r in
            let i = Int64(bitPattern: r.next())
            return ValueSample(.int, json: String(i), .stored) { $0 == .int(i) }
        },
        { r in
            // Written with a fraction: exact when the text is an integer, whatever its digits.
            let i = Int64(bitPattern: r.next()) >> (r.next() % 64)
            return numeric(.int, String(i) + ".0")
        },
        { r in numeric(.int, "\(r.next() % 1000)e\(r.next() % 25)") },
        { r in numeric(.int, "\(r.next() % 100).5") },
        { r in numeric(.int, String(r.next()) + String(r.next())) },
        { _ in .refused(.int, #""5""#) },
        { _ in .refused(.int, "true") },
    ]

    /// A number into an int or decimal: stored only as the same amount (Foundation's `Decimal`).
    static func numeric(_ kind: Kind, _ text: String) -> ValueSample {
        let amount = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!
        return ValueSample(kind, json: text, .storedOrRefused) { v in
            switch v {
            case .int(let i): Decimal(i) == amount
            case .decimal(let d): Decimal(string: d.description, locale: Locale(identifier: "en_US_POSIX")) == amount
            default: false
            }
        }
    }

    static let floats: [@Sendable (inout SeededGenerator) -> ValueSample] = reals(.float)
    static let doubles: [@Sendable (inout SeededGenerator) -> ValueSample] = reals(.double)

    static func reals(_ kind: Kind) -> [@Sendable (inout SeededGenerator) -> ValueSample] {
        /// The value of a JSON number: the nearest double (RFC 8259's reading), then the nearest float.
        @Sendable func real(_ text: String) -> ValueSample {
            let d = Double(text)!
            let expected: Value = kind == .float ? .float(Float(d)) : .double(d)
            let zeroFromNonZero =
                (kind == .float ? Float(d) == 0 : d == 0) && text.contains { "123456789".contains($0) }
            let overflow = kind == .float && !Float(d).isFinite
            if zeroFromNonZero || overflow { return .refused(kind, text) }
            return ValueSample(kind, json: text, .stored) { v in
                switch (v, expected) {
                case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
                case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
                default: false
                }
            }
        }
        return [
            { r in
                var d = Double(bitPattern: r.next())
                while !d.isFinite { d = Double(bitPattern: r.next()) }
                var text = String(d)
                if !text.contains(".") && !text.contains("e") { text += ".0" }
                return real(text)
            },
            { _ in real("-0.0") }, { _ in real("0.0") }, { _ in real("1e-50") }, { _ in real("3.5e38") },
            { _ in real("0.1") }, { _ in real("1e-310") }, { r in real("0.\(r.next())\(r.next())") },
            { _ in .refused(kind, "1e-400") }, { _ in .refused(kind, "1e400") },
            { _ in
                ValueSample(kind, json: #""NaN""#, .stored) { v in v.isNaN }
            },
            { _ in .refused(kind, #""nan""#) },
        ]
    }

    static let decimals: [@Sendable (inout SeededGenerator) -> ValueSample] = [
        { r in
            let text = "\(r.next() % 2 == 0 ? "-" : "")\(r.next() % 100_000).\(String(r.next() % 1000).suffix(2))0"
            return ValueSample(.decimal, json: quoted(text), .stored) { $0 == .decimal(DecimalNumber(exactly: text)!) }
        },
        { r in numeric(.decimal, String(r.next() % 10_000_000) + String(r.next() % 1_000_000_000_000_000)) },
        { r in numeric(.decimal, "\(r.next() % 1000).\(r.next())") },
        { _ in numeric(.decimal, "12345678901234567890123") },
        { _ in .refused(.decimal, #""1.2.3""#) },
    ]

    static let data: [@Sendable (inout SeededGenerator) -> ValueSample] = [
        { r in
            let bytes = Data((0..<(r.next() % 20)).map { _ in UInt8(truncatingIfNeeded: r.next()) })
            return ValueSample(.data, json: quoted(bytes.base64EncodedString()), .stored) { $0 == .data(bytes) }
        },
        { _ in .refused(.data, quoted("====")) }, { _ in .refused(.data, quoted("QR==")) },
        { _ in .refused(.data, quoted("QQ")) }, { _ in .refused(.data, quoted("QQ==\n")) },
    ]

    static let dates: [@Sendable (inout SeededGenerator) -> ValueSample] = [
        { r in
            // Made from components; the instant worked out with Foundation's calendar.
            let y = 1700 + Int(r.next() % 500)
            let (mo, d, h, mi, s) = (
                1 + Int(r.next() % 12), 1 + Int(r.next() % 28), Int(r.next() % 24),
                Int(r.next() % 60), Int(r.next() % 60)
            )
            let nanos = Int32(r.next() % 1_000_000_000)
            var c = DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
            c.timeZone = TimeZone(identifier: "UTC")
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let seconds = Int64(calendar.date(from: c)!.timeIntervalSince1970.rounded())
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%09dZ", y, mo, d, h, mi, s, nanos)
            let expected = Value.date(Timestamp(seconds: seconds, nanoseconds: nanos))
            return ValueSample(.date, json: quoted(text), .stored) { $0 == expected }
        },
        { _ in .refused(.date, quoted("2016-12-31T23:59:60Z")) },
        { _ in .refused(.date, quoted("2024-02-30")) },
        { _ in .refused(.date, quoted("1600-01-01T00:00:00Z")) },
    ]

    static let uuids: [@Sendable (inout SeededGenerator) -> ValueSample] = [
        { r in
            let u = UUID(uuid: r.uuidBytes())
            let text = r.next() % 2 == 0 ? u.uuidString : u.uuidString.lowercased()
            return ValueSample(.uuid, json: quoted(text), .stored) { $0 == .uuid(u) }
        },
        // Foundation's parser stops at NUL: the text before it is a UUID of its own.
        { r in .refused(.uuid, quoted(UUID(uuid: r.uuidBytes()).uuidString + "\u{0}")) },
        { r in .refused(.uuid, quoted(UUID(uuid: r.uuidBytes()).uuidString + "\u{0}junk")) },
        { _ in .refused(.uuid, quoted("not-a-uuid")) },
    ]

    static let bools: [@Sendable (inout SeededGenerator) -> ValueSample] = [
        { _ in ValueSample(.bool, json: "true", .stored) { $0 == .bool(true) } },
        { _ in ValueSample(.bool, json: "false", .stored) { $0 == .bool(false) } },
        { _ in .refused(.bool, "1") }, { _ in .refused(.bool, "0") }, { _ in .refused(.bool, #""true""#) },
    ]
}

extension SeededGenerator {
    mutating func uuidBytes() -> uuid_t {
        let (a, b) = (next(), next())
        return withUnsafeBytes(of: (a, b)) { $0.load(as: uuid_t.self) }
    }

    /// A short text of letters, accents, emoji, spaces and control characters (never NUL).
    mutating func text() -> String {
        let pieces = [
            "a", "keep", "é", "日本", "\u{1F600}", " ", "\u{1}", "\u{1F}", "\"", "\\", "'", "z", "\t", "\n", "\r\n",
            "\\N",
        ]
        return (0..<(1 + next() % 4)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined()
    }
}
