import Foundation

/// A parsed JSON document that keeps the order of object members.
///
/// Foundation's decoders forget member order, but order is meaningful to users here: a
/// schema's properties are shown, created as columns and written back by `init` in the order
/// the user wrote them. Integers and floating-point numbers stay distinct so that an `int`
/// property never silently receives `1.5`.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    /// A number kept as written, because a double would not hold it: more than 15 significant
    /// digits (an int of 17 digits written with a fraction, a decimal of 23 digits), or 2^53 and
    /// more, where doubles skip integers (`1.0e18` for an int). The parser
    /// makes it; ``Value/init(json:)`` reads it as a decimal, so that coercion keeps every digit
    /// or refuses the value.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([Member])

    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The member named `key`, if this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A number as the nearest double; nil for anything else.
    public var numberValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        case .number(let text): Double(text)
        default: nil
        }
    }

    /// A short name of the JSON kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

// MARK: - Parsing

extension JSONValue {
    /// Parses a complete JSON document.
    ///
    /// - Throws: `RealmAdapterError` with `errorCode` (a configuration file and an instruction
    ///   file fail differently); the message gives the line and column.
    public init(parsing data: Data, errorCode: RealmAdapterError.Code = .invalidConfiguration) throws {
        var parser = JSONParser(bytes: [UInt8](data), code: errorCode)
        self = try parser.parseDocument()
    }

    public init(parsing text: String, errorCode: RealmAdapterError.Code = .invalidConfiguration) throws {
        try self.init(parsing: Data(text.utf8), errorCode: errorCode)
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    let code: RealmAdapterError.Code
    var i = 0
    var depth = 0

    init(bytes: [UInt8], code: RealmAdapterError.Code) {
        self.bytes = bytes
        self.code = code
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }  // UTF-8 byte order mark
    }

    mutating func parseDocument() throws -> JSONValue {
        let v = try parseValue()
        skipSpace()
        guard i == bytes.count else { throw error("unexpected text after the JSON value") }
        return v
    }

    func error(_ what: String) -> RealmAdapterError {
        var line = 1
        var column = 1
        for b in bytes[..<min(i, bytes.count)] {
            if b == 10 {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return RealmAdapterError(code, "Invalid JSON at line \(line), column \(column): \(what).")
    }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 32 || bytes[i] == 9 || bytes[i] == 10 || bytes[i] == 13 { i += 1 }
    }

    mutating func parseValue() throws -> JSONValue {
        skipSpace()
        guard i < bytes.count else { throw error("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), 48...57: return try parseNumber()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(bytes[i])))'")
        }
    }

    mutating func literal(_ word: String) throws {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else {
            throw error("expected '\(word)'")
        }
        i += w.count
    }

    mutating func nest() throws {
        depth += 1
        guard depth <= 512 else { throw error("nesting deeper than 512 levels") }
    }

    mutating func parseObject() throws -> JSONValue {
        try nest()
        defer { depth -= 1 }
        i += 1
        var members: [JSONValue.Member] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                throw error("expected a member name in quotes")
            }
            let key = try parseString()
            if members.contains(where: { $0.key == key }) { throw error("duplicate member \"\(key)\"") }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
            i += 1
            members.append(.init(key, try parseValue()))
            skipSpace()
            guard i < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(members)
            }
            throw error("expected ',' or '}' in an object")
        }
    }

    mutating func parseArray() throws -> JSONValue {
        try nest()
        defer { depth -= 1 }
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            return .array(items)
        }
        while true {
            items.append(try parseValue())
            skipSpace()
            guard i < bytes.count else { throw error("unexpected end of input in an array") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            throw error("expected ',' or ']' in an array")
        }
    }

    mutating func parseString() throws -> String {
        i += 1
        var out = [UInt8]()
        while true {
            guard i < bytes.count else { throw error("unterminated string") }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                break
            }
            if c < 0x20 { throw error("control character in a string (escape it)") }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            i += 1
            guard i < bytes.count else { throw error("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw error("unpaired surrogate in \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return s
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw error("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            i += 1
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 97...102: d = UInt32(c - 87)
            case 65...70: d = UInt32(c - 55)
            default: throw error("invalid hex digit in \\u escape")
            }
            v = v << 4 | d
        }
        return v
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = i
        var isInteger = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, (48...57).contains(bytes[i]) else { throw error("invalid number") }
        while i < bytes.count {
            let c = bytes[i]
            if (48...57).contains(c) {
                i += 1
                continue
            }
            if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
                || ((c == UInt8(ascii: "+") || c == UInt8(ascii: "-")) && !isInteger)
            {
                isInteger = false
                i += 1
                continue
            }
            break
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let d = Double(text) else { throw error("invalid number '\(text)'") }
        // Beyond a double's range it would read as infinity, below it as zero: refused rather than changed.
        guard d.isFinite else { throw error("number out of range (a double reaches about ±1.8e308)") }
        let digits = JSONValue.significantDigits(bytes[start..<i])
        guard d != 0 || digits == 0 else {
            throw error("number too small: it would read as 0 (a double reaches about ±4.9e-324)")
        }
        // Past 2^53 a double skips integers: an int must be read from the digits.
        return digits > JSONValue.digitsADoubleKeeps || abs(d) >= 9_007_199_254_740_992 ? .number(text) : .double(d)
    }
}

extension JSONValue {
    /// Every decimal number of at most 15 significant digits survives a round trip through a double.
    static let digitsADoubleKeeps = 15

    /// The significant digits of a JSON number's mantissa: from its first non-zero digit to its last.
    static func significantDigits(_ number: ArraySlice<UInt8>) -> Int {
        let mantissa = number.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        let digits = mantissa.filter { (48...57).contains($0) }
        guard let first = digits.firstIndex(where: { $0 != 48 }), let last = digits.lastIndex(where: { $0 != 48 })
        else { return 0 }
        return last - first + 1
    }
}

// MARK: - Writing

extension JSONValue {
    /// The JSON text; `pretty` indents by two spaces and keeps member order.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: utf8(pretty: pretty), as: UTF8.self)
    }

    /// The JSON text as UTF-8 bytes (what goes on a wire: no String is made).
    public func utf8(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let v): out.append(contentsOf: String(v).utf8)
        case .double(let d):
            if d.isFinite {
                // Keep a fraction marker so the value reads back as a number, not an integer.
                let s = String(d)
                out.append(contentsOf: s.utf8)
                if !s.utf8.contains(UInt8(ascii: ".")) && !s.utf8.contains(UInt8(ascii: "e")) {
                    out.append(contentsOf: ".0".utf8)
                }
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSONValue.newline(&out, indent + 1) }
                item.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSONValue.newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            out.append(UInt8(ascii: "{"))
            for (k, m) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSONValue.newline(&out, indent + 1) }
                JSONValue.writeString(m.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                m.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSONValue.newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    /// Appends `s` as a JSON string (quoted and escaped): for writers that build JSON bytes
    /// themselves, without a ``JSONValue`` per value.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole (a hand-off writes 100,000 paths at once).
        guard s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: "\\t".utf8)
            case ..<0x20:
                let h = String(byte, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - h.count) + h).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
