/// A position in the Postgres write-ahead log, written `16/B374D848` as Postgres does.
public struct LSN: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var value: UInt64
    public init(_ value: UInt64) { self.value = value }

    /// Parses `X/Y` (hexadecimal halves).
    public init?(_ text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let hi = UInt64(parts[0], radix: 16), let lo = UInt64(parts[1], radix: 16),
            hi <= UInt32.max, lo <= UInt32.max
        else { return nil }
        value = hi << 32 | lo
    }

    public static let zero = LSN(0)
    public static func < (a: LSN, b: LSN) -> Bool { a.value < b.value }
    public var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }
}
