/// Core's statements number their parameters as SQLite does (`?`, `?N`); Postgres takes `$N`.
package enum PostgresPlaceholders {
    /// `sql` with each `?N` as `$N` and each bare `?` as `$` and one more than the highest
    /// number given before it (SQLite's rule); quoted text and names are left as they are.
    package static func numbered(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 8)
        var highest = 0
        var quote: Character?
        var i = sql.startIndex
        while i < sql.endIndex {
            let c = sql[i]
            i = sql.index(after: i)
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
                continue
            }
            switch c {
            case "'", "\"":
                quote = c
                out.append(c)
            case "?":
                let digits = sql[i...].prefix { $0.isASCII && $0.isNumber }
                if let n = Int(digits) {
                    out += "$\(n)"
                    highest = max(highest, n)
                    i = digits.endIndex
                } else {
                    highest += 1
                    out += "$\(highest)"
                }
            default:
                out.append(c)
            }
        }
        return out
    }
}
