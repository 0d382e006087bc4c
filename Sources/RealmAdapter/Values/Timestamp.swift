import Foundation

/// A point in time with nanosecond precision: the value of a `date` property.
///
/// `Foundation.Date` is a `Double` and cannot carry nanoseconds losslessly across the
/// range of dates users store; Realm's own timestamps are seconds plus nanoseconds, and so
/// is this type. Its JSON form is ISO-8601 in UTC with fractional seconds
/// (`2024-05-01T12:30:00.123456789Z`, at least millisecond digits, more when needed).
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Whole seconds since 1970-01-01T00:00:00Z (negative before).
    public var seconds: Int64
    /// Nanoseconds within the second, always `0..<1_000_000_000`.
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        // Normalize so that nanoseconds is never negative.
        var s = seconds
        var n = Int64(nanoseconds)
        s += n / 1_000_000_000
        n %= 1_000_000_000
        if n < 0 {
            n += 1_000_000_000
            s -= 1
        }
        self.seconds = s
        self.nanoseconds = Int32(n)
    }

    public init(_ date: Date) {
        let t = date.timeIntervalSince1970
        let s = t.rounded(.down)
        self.init(seconds: Int64(s), nanoseconds: Int32(((t - s) * 1e9).rounded()))
    }

    public var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    /// Nanoseconds since the epoch, as stored in the embedded store (covers years 1678–2261).
    var totalNanoseconds: Int64? {
        let (m, o1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (r, o2) = m.addingReportingOverflow(Int64(nanoseconds))
        return o1 || o2 ? nil : r
    }

    /// Whether a Realm can hold it (years 1678–2261).
    public var isStorable: Bool { totalNanoseconds != nil }

    init(totalNanoseconds n: Int64) {
        self.init(seconds: n / 1_000_000_000, nanoseconds: Int32(n % 1_000_000_000))
    }

    public var description: String { iso8601 }

    /// ISO-8601 in UTC with at least three fractional digits.
    public var iso8601: String {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secOfDay = seconds - days * 86400
        let (y, m, d) = Self.civil(fromDays: days)
        var frac = String(nanoseconds)
        frac = String(repeating: "0", count: 9 - frac.count) + frac
        while frac.count > 3 && frac.hasSuffix("0") { frac.removeLast() }
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(abs(v))
            return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, w - s.count)) + s
        }
        return
            "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secOfDay / 3600, 2)):\(pad(secOfDay / 60 % 60, 2)):\(pad(secOfDay % 60, 2)).\(frac)Z"
    }

    /// Parses `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM[:SS[.fffffffff]]` followed by `Z`, `±HH:MM`
    /// or nothing (UTC). Returns nil for anything else: a day the month does not have
    /// (`2024-02-30`), more than nine fractional digits (finer than a nanosecond: it could not
    /// be stored exactly), an offset beyond ±23:59.
    public init?(iso8601 text: String) {
        var text = text
        guard let t = text.withUTF8({ Timestamp(iso8601: $0) }) else { return nil }
        self = t
    }

    /// ``init(iso8601:)-(String)`` from UTF-8 bytes (as a database sends them, without a `String` in between).
    public init?(iso8601 b: UnsafeBufferPointer<UInt8>) {
        var i = 0
        func number(_ width: Int) -> Int64? {
            guard i + width <= b.count else { return nil }
            var v: Int64 = 0
            for k in i..<(i + width) {
                guard b[k] >= 48 && b[k] <= 57 else { return nil }
                v = v * 10 + Int64(b[k] - 48)
            }
            i += width
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        var negativeYear = false
        if i < b.count, b[i] == UInt8(ascii: "-") {
            negativeYear = true
            i += 1
        }
        guard var year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
            (1...12).contains(month)
        else { return nil }
        if negativeYear { year = -year }
        guard (1...Self.daysIn(month: month, of: year)).contains(day) else { return nil }
        var h: Int64 = 0
        var mi: Int64 = 0
        var s: Int64 = 0
        var nanos: Int64 = 0
        var offset: Int64 = 0
        if i < b.count {
            guard b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " ") else { return nil }
            i += 1
            guard let hh = number(2), expect(58), let mm = number(2), hh < 24, mm < 60 else { return nil }
            h = hh
            mi = mm
            if expect(58) {
                guard let ss = number(2), ss < 60 else { return nil }
                s = ss
                if expect(46) {
                    var digits = 0
                    while i < b.count, b[i] >= 48, b[i] <= 57 {
                        if digits < 9 { nanos = nanos * 10 + Int64(b[i] - 48) }
                        digits += 1
                        i += 1
                    }
                    guard (1...9).contains(digits) else { return nil }
                    for _ in digits..<9 { nanos *= 10 }
                }
            }
            if expect(UInt8(ascii: "Z")) {
            } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = number(2), oh < 24 else { return nil }
                _ = expect(58)
                let om = number(2) ?? 0
                guard om < 60 else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            }
            guard i == b.count else { return nil }
        }
        let days = Self.days(fromCivil: year, month, day)
        self.init(seconds: days * 86400 + h * 3600 + mi * 60 + s - offset, nanoseconds: Int32(nanos))
    }

    /// The number of days of `month` (1–12) in `year` (proleptic Gregorian).
    static func daysIn(month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
