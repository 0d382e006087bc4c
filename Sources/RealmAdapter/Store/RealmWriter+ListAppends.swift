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
    /// the lists' lengths are looked up many lists at a time (``listLengths(_:_:_:owners:)``),
    /// the rows stored ``rowsPerInsert(width:)`` at a time. With `targetsChecked`, the caller has
    /// found every link's target in this transaction.
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
        /// The owner's key as the first LIST_INSERT coerced whole checks it (its type, property and key).
        func owner(_ list: ListAppend) throws -> Value {
            guard
                case .listInsert(_, let key, _, _, _) = try Instruction.listInsert(
                    objectType: n, identity: list.owner, property: p, index: 0, value: list.items[0]
                ).coerced(in: schema)
            else {
                preconditionFailure("a LIST_INSERT coerces to a LIST_INSERT")
            }
            return key
        }
        // Looked up ahead when no change is recorded (which reads each owner) and the list exists;
        // an owner not found, or whose key does not coerce, is taken alone below, which says why.
        let lengths =
            recording == nil && schema[type: n]?[property: p]?.type.isList == true
            ? try listLengths(n, p, owners: lists.compactMap { $0.items.isEmpty ? nil : try? owner($0) }) : nil
        checking: for list in lists where !list.items.isEmpty {
            do {
                let key = try owner(list)
                let (t, lt, stored) = try lengths?[key] ?? self.list(n, key, p)
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

    /// The lengths of list `p` of objects of type `n`, by owner, many owners per statement: the
    /// owners found in the Realm, with the schema and list table as ``list(_:_:_:)`` gives them.
    func listLengths(_ n: String, _ p: String, owners: [Value]) throws -> [Value: (ObjectSchema, String, Int)] {
        let (t, tt) = try type(n)
        let lt = try listTable(t, p)
        var lengths: [Value: (ObjectSchema, String, Int)] = [:]
        var byStoredKey: [StoredValue: Value] = [:]
        let distinct = Array(Set(owners))
        var next = 0
        while next < distinct.count {
            let chunk = distinct[next..<min(distinct.count, next + Self.keysPerLookup)]
            next += chunk.count
            let (list, keys) = Self.keyList(chunk)
            let stmt = try db.cachedStatement(
                sql:
                    "SELECT key, (SELECT count(*) FROM \(lt) WHERE realm = ?1 AND owner = o.key) FROM \(tt.table) AS o "
                    + "WHERE realm = ?1 AND key IN \(list)")
            var arguments: StoreArguments = [realm]
            for key in keys {
                arguments.append(StoreArgument.key(key))
                byStoredKey[try RealmTables.encode(key)] = key
            }
            try stmt.bind(arguments: arguments)
            defer { stmt.reset() }
            while try stmt.step() {
                if let key = byStoredKey[db.dialect.storedKey(stmt.column(0))] {
                    lengths[key] = (t, lt, Int(stmt.int64(1)))
                }
            }
        }
        return lengths
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
