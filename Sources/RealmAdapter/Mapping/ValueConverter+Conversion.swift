import Foundation

extension ValueConverter {
    /// Database value → Realm value (before coercion to the property's type).
    func toRealm(_ v: Value) throws -> Value {
        func fail() -> RealmAdapterError {
            RealmAdapterError.converterCannot(rawValue, kind: v.kindName)
        }
        switch self {
        case .string, .json:
            if case .string = v { return v }
            if case .uuid(let u) = v { return .string(u.text) }
            return .string(v.description)
        case .int:
            switch v {
            case .int: return v
            case .string(let s):
                guard let i = Int64(s.trimmingCharacters(in: .whitespaces)) else { throw fail() }
                return .int(i)
            case .double(let d) where d.rounded() == d: return .int(Int64(d))
            case .decimal(let d): return .int(NSDecimalNumber(decimal: d.decimal).int64Value)
            case .bool(let b): return .int(b ? 1 : 0)
            default: throw fail()
            }
        case .double:
            switch v {
            case .double: return v
            case .int(let i): return .double(Double(i))
            case .float(let f): return .double(Double(f))
            case .decimal(let d): return .double(d.double)
            case .string(let s):
                guard let d = Double(s) else { throw fail() }
                return .double(d)
            default: throw fail()
            }
        case .decimal:
            switch v {
            case .decimal: return v
            case .int(let i): return .decimal(DecimalNumber(i))
            case .double(let d):
                guard let n = DecimalNumber(d) else { throw fail() }
                return .decimal(n)
            case .string(let s):
                // Money and similar text: keep digits, sign and the decimal point.
                let cleaned = s.filter { $0.isNumber || $0 == "." || $0 == "-" }
                guard let d = DecimalNumber(exactly: cleaned) else { throw fail() }
                return .decimal(d)
            default: throw fail()
            }
        case .bool:
            switch v {
            case .bool: return v
            case .int(let i): return .bool(i != 0)
            case .string(let s):
                switch s.lowercased() {
                case "t", "true", "1", "y", "yes": return .bool(true)
                case "f", "false", "0", "n", "no": return .bool(false)
                default: throw fail()
                }
            default: throw fail()
            }
        case .epochSeconds, .epochMillis:
            let scale: Double = self == .epochSeconds ? 1 : 1000
            switch v {
            case .int(let i):
                return .date(
                    Timestamp(
                        seconds: self == .epochSeconds ? i : i / 1000,
                        nanoseconds: self == .epochSeconds ? 0 : Int32(i % 1000) * 1_000_000))
            case .double(let d): return .date(Timestamp(Date(timeIntervalSince1970: d / scale)))
            case .decimal(let d): return .date(Timestamp(Date(timeIntervalSince1970: d.double / scale)))
            default: throw fail()
            }
        }
    }

    /// Realm value → database value: the inverse of ``toRealm(_:)``.
    func toDatabase(_ v: Value) throws -> Value {
        switch (self, v) {
        case (.epochSeconds, .date(let t)): return .int(t.seconds)
        case (.epochMillis, .date(let t)): return .int(t.seconds * 1000 + Int64(t.nanoseconds / 1_000_000))
        default: return v  // text, numbers and booleans are accepted by the column's own input function
        }
    }
}
