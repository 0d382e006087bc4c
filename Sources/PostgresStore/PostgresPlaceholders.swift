/// Core's statements number their parameters as SQLite does (`?`, `?N`); Postgres takes `$N`.
package enum PostgresPlaceholders {
    /// `sql` with each `?N` as `$N` and each bare `?` as `$` and one more than the highest
    /// number given before it (SQLite's rule); quoted text and names are left as they are.
    package static func numbered(_ sql: String) -> String { numbered(sql, renumbering: nil).sql }

    /// ``numbered(_:)``, without the parameters `sql` never uses (Postgres cannot type those):
    /// the SQL, and the SQLite numbers of the parameters it takes, in its order.
    package static func compacted(_ sql: String) -> (sql: String, parameters: [Int]) {
        let (numbered, used) = numbered(sql, renumbering: nil)
        let parameters = used.sorted()
        // Sorted distinct numbers from 1 leave none out when the last is their count.
        if (parameters.last ?? 0) == parameters.count { return (numbered, parameters) }
        var position: [Int: Int] = [:]
        for (i, n) in parameters.enumerated() { position[n] = i + 1 }
        return (Self.numbered(sql, renumbering: position).sql, parameters)
    }

    /// The SQL numbered, each number through `renumbering` if given, and the numbers used.
    private static func numbered(_ sql: String, renumbering: [Int: Int]?) -> (sql: String, used: Set<Int>) {
        var used = Set<Int>()
        func placeholder(_ n: Int) -> String {
            used.insert(n)
            return "$\(renumbering?[n] ?? n)"
        }
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
                    out += placeholder(n)
                    highest = max(highest, n)
                    i = digits.endIndex
                } else {
                    highest += 1
                    out += placeholder(highest)
                }
            default:
                out.append(c)
            }
        }
        return (out, used)
    }
}
