import Foundation
import RealmAdapter

/// Rows in `COPY … TO STDOUT` text format: fields separated by tabs, `\N` for NULL, and
/// backslash escapes (`\t`, `\n`, `\\`, octal `\123`, hex `\x41`, …) inside values.
enum PostgresCopyText {
    /// Calls `field(i, bytes)` for each field of a row in order; `bytes` is nil for NULL and
    /// already unescaped (valid only during the call).
    static func fields(_ row: UnsafeBufferPointer<UInt8>, _ field: (Int, UnsafeBufferPointer<UInt8>?) throws -> Void) throws {
        var start = 0, index = 0, escaped = false
        var i = 0
        let n = row.count
        func emit(_ end: Int) throws {
            let slice = UnsafeBufferPointer(rebasing: row[start..<end])
            if slice.count == 2 && slice[0] == 92 && slice[1] == 78 {  // \N
                try field(index, nil)
            } else if escaped {
                let bytes = unescape(slice)
                try bytes.withUnsafeBufferPointer { try field(index, $0) }
            } else {
                try field(index, slice)
            }
            index += 1
        }
        while i < n {
            let c = row[i]
            if c == 9 {
                try emit(i)
                start = i + 1
                escaped = false
            } else if c == 92 {
                escaped = true
                i += 1  // the escaped character is never a separator
            }
            i += 1
        }
        try emit(n)
    }

    static func unescape(_ s: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        func octal(_ c: UInt8) -> UInt8? { (48...55).contains(c) ? c - 48 : nil }
        while i < s.count {
            let c = s[i]
            guard c == 92, i + 1 < s.count else { out.append(c); i += 1; continue }
            let e = s[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(8)
            case UInt8(ascii: "f"): out.append(12)
            case UInt8(ascii: "n"): out.append(10)
            case UInt8(ascii: "r"): out.append(13)
            case UInt8(ascii: "t"): out.append(9)
            case UInt8(ascii: "v"): out.append(11)
            case 48...55:  // up to three octal digits
                var v = e - 48
                var k = 0
                while k < 2, i < s.count, let d = octal(s[i]) { v = v &* 8 &+ d; i += 1; k += 1 }
                out.append(v)
            case UInt8(ascii: "x") where i < s.count && hexDigit(s[i]) != nil:
                var v: UInt8 = 0
                var k = 0
                while k < 2, i < s.count, let d = hexDigit(s[i]) { v = v &* 16 &+ d; i += 1; k += 1 }
                out.append(v)
            default: out.append(e)
            }
        }
        return out
    }
}

extension PostgresType {
    /// A value from its text-format bytes; integers, booleans and floats without a detour through `String`.
    func decode(bytes b: UnsafeBufferPointer<UInt8>) throws -> Value {
        if case .scalar(let s) = kind {
            switch s {
            case .int:
                if let i = Self.parseInt(b) { return .int(i) }
            case .bool where b.count == 1:
                if b[0] == UInt8(ascii: "t") { return .bool(true) }
                if b[0] == UInt8(ascii: "f") { return .bool(false) }
            case .double:
                if let d = Self.parseDouble(b) { return .double(d) }
            case .uuid:
                if let u = Self.parseUUID(b) { return .uuid(u) }
            case .date:
                if let t = Timestamp(iso8601: b) { return .date(t) }
            default: break
            }
        }
        return try decode(String(decoding: b, as: UTF8.self))
    }

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (Foundation's parser goes through `sscanf`).
    static func parseUUID(_ b: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard b.count == 36 else { return nil }
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &u) { out -> Bool in
            var i = 0, j = 0
            while i < 36 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard b[i] == UInt8(ascii: "-") else { return false }
                    i += 1
                    continue
                }
                guard let hi = hexDigit(b[i]), let lo = hexDigit(b[i + 1]) else { return false }
                out[j] = hi << 4 | lo
                i += 2
                j += 1
            }
            return true
        }
        return ok ? UUID(uuid: u) : nil
    }

    /// A float in Postgres's text form (shortest exact digits, `NaN`, `Infinity`), via `strtod`
    /// on a stack copy rather than a `String`.
    static func parseDouble(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        guard !b.isEmpty, b.count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: b.count + 1) { buffer -> Double? in
            for k in 0..<b.count { buffer[k] = CChar(bitPattern: b[k]) }
            buffer[b.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let d = strtod(buffer.baseAddress!, &end)
            return end == buffer.baseAddress! + b.count ? d : nil
        }
    }

    static func parseInt(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        // Up to 18 digits cannot overflow; longer ones take the checked path.
        guard !b.isEmpty, b.count <= 18 else { return nil }
        var i = 0
        let negative = b[0] == UInt8(ascii: "-")
        if negative { i = 1; guard b.count > 1 else { return nil } }
        var v: Int64 = 0
        while i < b.count {
            let d = b[i] &- 48
            guard d < 10 else { return nil }
            v = v * 10 + Int64(d)
            i += 1
        }
        return negative ? -v : v
    }
}
