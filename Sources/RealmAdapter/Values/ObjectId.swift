/// A 12-byte object identifier (the BSON ObjectId Realm uses), written as 24 hex digits.
public struct ObjectId: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Parses 24 hexadecimal digits (either case).
    public init?(_ hex: String) {
        let u = Array(hex.utf8)
        guard u.count == 24 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(12)
        for k in stride(from: 0, to: 24, by: 2) {
            guard let hi = Self.nibble(u[k]), let lo = Self.nibble(u[k + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        bytes = out
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        self.bytes = bytes
    }

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(24)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
