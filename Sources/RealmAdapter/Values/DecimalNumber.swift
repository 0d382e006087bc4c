import Foundation

/// A decimal number exactly as written, scale included: `1.00` stays `1.00` (apps show money),
/// where Foundation's `Decimal` keeps `1`.
///
/// It is held as its canonical text, the plain notation Postgres prints for `numeric`: an
/// optional `-`, the integer digits without leading zeros (`0` when there are none), and, when
/// the scale is above zero, `.` and exactly `scale` fraction digits. Written with an exponent, a
/// number gets the scale Postgres gives it: `1.50e1` is `15.0`, `25e-3` is `0.025`. Two numbers
/// are equal when their texts are: `1.0` and `1.00` differ, as they do to an app that shows them
/// (``decimal`` compares amounts).
public struct DecimalNumber: Hashable, Sendable, CustomStringConvertible {
    /// The canonical text.
    public let description: String

    /// The significant digits a decimal holds (from the first non-zero digit to the last one).
    public static let significantDigits = 38
    /// The most digits before the point, and the largest scale (Foundation's `Decimal` holds both).
    public static let maximumDigitsAroundThePoint = 128

    /// What an accepted decimal looks like, for error messages.
    public static let expected =
        "a decimal number as text, such as \"12.50\", of at most \(significantDigits) "
        + "significant digits and \(maximumDigitsAroundThePoint) digits either side of the point"

    /// The decimal number `text` is, if it is one in full and fits exactly: `[+-]digits[.digits][e[+-]digits]`
    /// within ``significantDigits`` and ``maximumDigitsAroundThePoint``. Nil otherwise (a prefix
    /// such as `1.2` of `1.2.3` is never taken, and nothing is rounded).
    public init?(exactly text: String) {
        guard let parts = Self.parse(text) else { return nil }
        self.init(parts)
    }

    /// An integer, at scale 0.
    public init(_ i: Int64) { description = String(i) }

    /// A double's shortest exact text (`0.1` is `0.1`, `1.0` is `1.0`); nil for NaN and infinities.
    public init?(_ d: Double) {
        guard d.isFinite else { return nil }
        self.init(exactly: String(d))
    }

    /// The number's scale: its digits after the point.
    public var scale: Int {
        description.firstIndex(of: ".").map { description.distance(from: $0, to: description.endIndex) - 1 } ?? 0
    }

    /// The amount as a Foundation `Decimal`, for arithmetic (the scale is not kept).
    public var decimal: Decimal { Decimal(string: description, locale: Locale(identifier: "en_US_POSIX")) ?? .nan }

    /// The number as the nearest double.
    public var double: Double { Double(description) ?? .nan }

    /// Whether the number has no fraction (`12.00` has none).
    public var isIntegral: Bool { description.drop { $0 != "." }.dropFirst().allSatisfy { $0 == "0" } }

    /// The number as an int, when it is integral and fits in 64 bits.
    public var exactInt64: Int64? {
        guard isIntegral else { return nil }
        return Int64(description.prefix { $0 != "." })
    }
}

extension DecimalNumber: ExpressibleByStringLiteral {
    /// A decimal written in code; the literal must be one (``init(exactly:)``).
    public init(stringLiteral text: String) {
        guard let d = DecimalNumber(exactly: text) else { preconditionFailure("\"\(text)\" is not \(Self.expected)") }
        self = d
    }
}

extension DecimalNumber {
    /// A number's parts as written: its sign, all its digits, and the power of ten of the last digit.
    private struct Parts {
        var negative: Bool
        var digits: [UInt8]
        var exponent: Int
    }

    private init(_ p: Parts) {
        let zero = UInt8(ascii: "0")
        var digits = p.digits
        let scale = max(0, -p.exponent)
        if p.exponent > 0 { digits += [UInt8](repeating: zero, count: p.exponent) }
        if digits.count <= scale { digits = [UInt8](repeating: zero, count: scale + 1 - digits.count) + digits }
        let integer = digits.count - scale
        let firstKept = digits.prefix(integer - 1).firstIndex { $0 != zero } ?? integer - 1
        var text = p.negative && digits.contains { $0 != zero } ? "-" : ""
        text += String(decoding: digits[firstKept..<integer], as: UTF8.self)
        if scale > 0 { text += "." + String(decoding: digits[integer...], as: UTF8.self) }
        description = text
    }

    private static func parse(_ text: String) -> Parts? {
        let u = Array(text.utf8)
        var i = 0
        func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
        var negative = false
        if i < u.count, u[i] == UInt8(ascii: "-") || u[i] == UInt8(ascii: "+") {
            negative = u[i] == UInt8(ascii: "-")
            i += 1
        }
        var digits: [UInt8] = []
        var fraction = 0
        var sawPoint = false
        while i < u.count {
            if isDigit(u[i]) {
                digits.append(u[i])
                if sawPoint { fraction += 1 }
            } else if u[i] == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else {
                break
            }
            i += 1
        }
        guard !digits.isEmpty else { return nil }
        var exponent = 0
        if i < u.count {
            guard u[i] == UInt8(ascii: "e") || u[i] == UInt8(ascii: "E") else { return nil }
            i += 1
            var sign = 1
            if i < u.count, u[i] == UInt8(ascii: "-") || u[i] == UInt8(ascii: "+") {
                sign = u[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
            }
            guard i < u.count, u[i...].allSatisfy(isDigit), u.count - i <= 6 else { return nil }
            exponent = sign * Int(String(decoding: u[i...], as: UTF8.self))!
        }
        let zero = UInt8(ascii: "0")
        let significant = (digits.lastIndex { $0 != zero } ?? 0) - (digits.firstIndex { $0 != zero } ?? 0) + 1
        let last = exponent - fraction  // the power of ten of the last digit written
        let leading = digits.firstIndex { $0 != zero } ?? digits.count - 1
        let integerDigits = digits.count - leading + last  // digits before the point, leading zeros left out
        guard significant <= significantDigits, -last <= maximumDigitsAroundThePoint,
            integerDigits <= maximumDigitsAroundThePoint
        else { return nil }
        return Parts(negative: negative, digits: digits, exponent: last)
    }
}
