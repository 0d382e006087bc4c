/// LIST_INSERTs at the ends of lists, many rows per statement: a bulk load fills every list
/// of a type this way, and one statement run per element cost more than the element.
extension RealmWriter {
    /// One list's LIST_INSERTs at its end: its owner and the items to append.
    struct ListAppend {
        var owner: Value
        var items: [Value]
    }

    /// Applies the LIST_INSERTs of `lists` (each at the end of property `p` of its owner, of type
    /// `n`) as ``apply(_:)`` would one by one, appending each typed to `typed`. The owners and
    /// the lists' lengths are looked up once per list, the rows stored ``rowsPerInsert(width:)``
    /// at a time. With `targetsChecked`, the caller has found every link's target in this transaction.
    ///
    /// Everything is checked before anything is stored; when an instruction fails, the ones before
    /// it are stored (and in `typed`) and it throws, as one by one would.
    mutating func appendToLists(
        _ n: String, _ p: String, _ lists: [ListAppend], targetsChecked: Bool = false, into typed: inout [Instruction]
    ) throws {
        var rows: [(owner: Value, index: Int64, value: Value)] = []
        rows.reserveCapacity(lists.reduce(0) { $0 + $1.items.count })
        var failure: Error?
        var table: String?
        var ofLinks = false
        // An owner may come more than once: its later items go after the earlier ones.
        var appended: [Value: Int] = [:]
        checking: for list in lists where !list.items.isEmpty {
            do {
                // The first one coerced whole: it checks the type, the property and the owner's key.
                guard
                    case .listInsert(_, let key, _, _, _) = try Instruction.listInsert(
                        objectType: n, identity: list.owner, property: p, index: 0, value: list.items[0]
                    ).coerced(in: schema)
                else {
                    preconditionFailure("a LIST_INSERT coerces to a LIST_INSERT")
                }
                let (t, lt, stored) = try self.list(n, key, p)
                let count = stored + appended[key, default: 0]
                appended[key, default: 0] += list.items.count
                let property = t[property: p]!
                table = lt
                ofLinks = property.type.linkTarget != nil
                for (k, v) in list.items.enumerated() {
                    let value = try Instruction.listElement(v, of: t, property, in: schema)
                    if !targetsChecked { try checkElement(t, p, value) }
                    rows.append((key, Int64(count + k), value))
                }
            } catch {
                failure = error
                break checking
            }
        }
        if let table { try storeListRows(rows, in: table, ofLinks: ofLinks) }
        for r in rows {
            typed.append(
                .listInsert(objectType: n, identity: r.owner, property: p, index: Int(r.index), value: r.value))
        }
        if let failure { throw failure }
    }

    /// Inserts list rows into list table `table`, ``rowsPerInsert(width:)`` per statement.
    private func storeListRows(
        _ rows: [(owner: Value, index: Int64, value: Value)], in table: String, ofLinks: Bool
    ) throws {
        var next = 0
        let perStatement = rowsPerInsert(width: 4)
        while next < rows.count {
            let n = min(perStatement, rows.count - next)
            let stmt = try db.cachedStatement(sql: Self.listInsertSQL(table, rows: n))
            stmt.reset()
            for k in 0..<n {
                let r = rows[next + k]
                let base = Int32(k * 4)
                stmt.bind(realm, at: base + 1)
                try stmt.bind(key: r.owner, at: base + 2)
                stmt.bind(r.index, at: base + 3)
                if ofLinks { try stmt.bind(key: r.value, at: base + 4) } else { try stmt.bind(r.value, at: base + 4) }
            }
            try stmt.run()
            stmt.clearBindings()
            next += n
        }
    }

    static func listInsertSQL(_ table: String, rows: Int) -> String {
        "INSERT INTO \(table) (realm, owner, idx, value) VALUES "
            + Array(repeating: "(?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }
}
