/// INSERTs stored many rows per statement: each statement run has a fixed cost in SQLite,
/// about half of a narrow row's, and bulk writes (loads, app backlogs) are mostly INSERTs.
extension RealmWriter {
    /// Applies the INSERTs of one type at the start of `instructions`, as ``apply(_:)`` would
    /// one by one, appending them typed to `typed`; returns how many it applied (0 when the first
    /// instruction is not an INSERT).
    ///
    /// For types ``PreparedInserts/canPrepare(_:)`` accepts, rows go many at a time
    /// (``rowsPerInsert(width:)``): the layout by type keys rows by (realm, key), dearer per row
    /// than the tables of one Realm were, and this pays it back. A statement that fails is undone
    /// alone and its rows are stored again one by one, which names the duplicate key. When it
    /// throws, `typed` holds exactly the instructions applied before the failing one.
    mutating func applyInserts(_ instructions: ArraySlice<Instruction>, into typed: inout [Instruction]) throws -> Int {
        guard case .insert(let n, _, _) = instructions.first else { return 0 }
        var end = instructions.startIndex
        while end < instructions.endIndex, case .insert(n, _, _) = instructions[end] { end += 1 }
        let run = instructions[instructions.startIndex..<end]
        let plan = try plan(n)
        let width = plan.columns.count
        let perStatement = rowsPerInsert(width: width)
        var next = run.startIndex
        // Full statements, then one for the rest. A row that gives a list's items goes alone:
        // its list is filled right after its row, as one by one.
        // Recording changes: one by one, each records its object as created.
        let batched = recording == nil && PreparedInserts.canPrepare(plan.typing.type)
        let typing = plan.typing
        let singleValuesOnly = typing.slotNames.count == typing.type.properties.count
        while batched, run.endIndex - next >= 2 {
            var end = min(next + perStatement, run.endIndex)
            if !singleValuesOnly { end = run[next..<end].firstIndex(where: typing.mayGiveAList) ?? end }
            // Under 64 rows, in statements of 32, 16, …, 2: each length is a statement of its own,
            // which Postgres prepares on the connection (a few hundred there at most).
            if end - next < 64 { end = next + Self.largestPowerOfTwo(atMost: end - next) }
            guard end - next >= 2 else {
                guard case .insert(_, let id, let values) = run[next] else { preconditionFailure("not an INSERT") }
                typed.append(try insert(n, id, values))
                next += 1
                continue
            }
            try insertStatement(run[next..<end], plan, try plan.statement(rows: end - next, db: db), into: &typed)
            next = end
        }
        for case .insert(_, let id, let values) in run[next...] { typed.append(try insert(n, id, values)) }
        return run.count
    }

    static func largestPowerOfTwo(atMost n: Int) -> Int { n < 1 ? 0 : 1 << (Int.bitWidth - 1 - n.leadingZeroBitCount) }

    /// Stores `rows` INSERTs with one run of `stmt`, or one by one if it fails.
    private mutating func insertStatement(
        _ rows: ArraySlice<Instruction>, _ plan: InsertPlan, _ stmt: any StoreStatement,
        into typed: inout [Instruction]
    ) throws {
        let typing = plan.typing
        let width = Int32(plan.columns.count)
        let first = typed.count
        stmt.reset()
        // A link to an object of the type counts the rows of this statement up to its own: they
        // are stored in order, as one by one.
        var ids: [Value] = []
        for (j, instruction) in rows.enumerated() {
            guard case .insert(let n, let rawId, let values) = instruction else { preconditionFailure("not an INSERT") }
            defer { typing.clearRow() }
            let (id, checked, _) = try typing.check(n, rawId, values, schema: schema)
            ids.append(id)
            let base = Int32(j) * width
            stmt.bind(realm, at: base + 1)
            for k in typing.row.indices {
                let value = typing.row[k]!
                if let target = typing.slotTargets[k], !value.isNull, target != n || !ids.contains(value) {
                    try checkTarget(target, value, from: typing.type, typing.slotProperties[k])
                }
                try plan.bind(value, column: k, to: stmt, at: base + 2 + Int32(k))
            }
            typed.append(.insert(objectType: n, identity: id, values: checked))
        }
        do {
            try stmt.run()
        } catch let e as StoreError where e.isConstraint {
            typed.removeSubrange(first...)
            for case .insert(let n, let id, let values) in rows { typed.append(try insert(n, id, values)) }
        }
    }

    /// Stores INSERTs checked ahead (``PreparedInserts``); false, storing nothing, if the
    /// Realm's type is not the one they were checked against (its schema grew meanwhile) or a
    /// link's target is missing (stored one by one, the missing one is named).
    ///
    /// Rows go in by ``rowsPerInsert(width:)`` per statement. A statement that fails is undone
    /// alone and its rows are stored again one by one, which names the duplicate key.
    mutating func insert(_ prepared: PreparedInserts, known: KnownObjects? = nil) throws -> Bool {
        guard let current = schema[type: prepared.type.name], current == prepared.type else { return false }
        let n = prepared.type.name
        let plan = try plan(n)
        let single = plan.statement
        let width = prepared.width
        let count = prepared.count
        let keys = plan.keys
        let db = self.db
        let type = plan.typing.type
        let realm = self.realm
        let perStatement = rowsPerInsert(width: width + 1)
        guard try linksFound(prepared, known: known) else { return false }
        var used: [Int: any StoreStatement] = [:]
        try prepared.encoded.bytes.withUnsafeBytes { records in
            // Text and blobs are bound in place: no statement keeps them past this call.
            defer {
                single.clearBindings()
                for stmt in used.values { stmt.clearBindings() }
            }
            var r = BinaryReader(buffer: records)
            /// Binds the Realm and the next record's values from parameter `first` on: every slot, in slot order.
            func bindRecord(to stmt: any StoreStatement, from first: Int32) throws {
                stmt.bind(realm, at: first)
                let named = try Self.recordHead(&r, width: width)
                for k in 0..<Int32(width) {
                    if named { try r.skipString() }
                    if keys[Int(k)] {
                        try stmt.bind(keyOf: &r, at: first + 1 + k)
                    } else {
                        try stmt.bind(&r, at: first + 1 + k)
                    }
                }
            }
            func storeOne() throws {
                let start = r.i
                single.reset()
                try bindRecord(to: single, from: 1)
                try Self.run(single, Self.identity(records, at: start), type)
            }
            // Full statements, then one for the rest (per-user Realms get a few rows each).
            var row = 0
            while row < count {
                let rows = min(perStatement, count - row)
                row += rows
                if rows == 1 {
                    try storeOne()
                    continue
                }
                let stmt = try plan.statement(rows: rows, db: db)
                used[rows] = stmt
                stmt.reset()
                let start = r.i
                for k in 0..<rows { try bindRecord(to: stmt, from: Int32(k * (width + 1) + 1)) }
                do {
                    try stmt.run()
                } catch let e as StoreError where e.isConstraint {
                    r.i = start
                    for _ in 0..<rows { try storeOne() }
                }
            }
            try recordCreated(type, records: records, count: count)
        }
        return true
    }

    /// Reads a prepared INSERT record up to its first slot; whether its slots are named.
    private static func recordHead(_ r: inout BinaryReader, width: Int) throws -> Bool {
        guard try r.byte() == 1 else { throw BinaryReader.corrupt }
        try r.skipString()
        try r.skipValue()
        guard try r.varint() == width else { throw BinaryReader.corrupt }
        return try r.byte() == 0
    }

    /// Whether every link of the prepared rows finds its target in the Realm (read before any
    /// row is stored: a loader then stores the rows one by one, deciding what a missing target
    /// means). Targets in `known` are not looked up; those found are added to it. The others are
    /// looked up many at a time (``TargetLookup``): on a store across a network, one round trip
    /// per target was most of a linked load.
    private func linksFound(_ prepared: PreparedInserts, known: KnownObjects?) throws -> Bool {
        let typing = prepared.typing
        guard typing.slotTargets.contains(where: { $0 != nil }) else { return true }
        let width = prepared.width
        // Rows link to the same objects again and again (a product, a customer): each is looked
        // up once. One set per target type, shared by the slots that link to it.
        let types = Array(Set(typing.slotTargets.compactMap { $0 }))
        var found = types.map { known?.take($0) ?? KnownKeys() }
        defer { if let known { for (t, f) in zip(types, found) { known.put(t, f) } } }
        var lookups = try types.map { TargetLookup(table: try type($0).1.table) }
        let slotSet = typing.slotTargets.map { t in t.flatMap { types.firstIndex(of: $0) } }
        let scanned = try prepared.encoded.bytes.withUnsafeBytes { records in
            var r = BinaryReader(buffer: records)
            for _ in 0..<prepared.count {
                let named = try Self.recordHead(&r, width: width)
                for k in 0..<width {
                    if named { try r.skipString() }
                    guard let s = slotSet[k] else {
                        try r.skipValue()
                        continue
                    }
                    let v = try r.value()
                    if v.isNull || found[s].contains(v) { continue }
                    guard try lookups[s].ask(v, realm: realm, in: db, into: &found[s]) else { return false }
                }
            }
            return true
        }
        guard scanned else { return false }
        for s in lookups.indices where try !lookups[s].finish(realm: realm, in: db, into: &found[s]) { return false }
        return true
    }

    /// Keys of one target type looked up many at a time: whether all of them are in the Realm.
    struct TargetLookup {
        let table: String
        private var asked: [Value] = []
        private var pending = KnownKeys()

        init(table: String) { self.table = table }

        /// Asks for `key`, looking up the keys asked so far when there are enough of them; false
        /// when one of them is missing. Keys found go into `found`.
        mutating func ask(_ key: Value, realm: Int64, in db: any StoreConnection, into found: inout KnownKeys) throws
            -> Bool
        {
            guard !pending.contains(key) else { return true }
            asked.append(key)
            pending.insert(key)
            if asked.count < RealmWriter.keysPerLookup { return true }
            return try finish(realm: realm, in: db, into: &found)
        }

        /// Looks up the keys asked and not yet looked up; false when one of them is missing.
        mutating func finish(realm: Int64, in db: any StoreConnection, into found: inout KnownKeys) throws -> Bool {
            guard !asked.isEmpty else { return true }
            let (list, keys) = RealmWriter.keyList(asked)
            var arguments: StoreArguments = [realm]
            for key in keys { arguments.append(StoreArgument.key(key)) }
            let count = try db.cachedStatement(sql: "SELECT count(*) FROM \(table) WHERE realm = ? AND key IN \(list)")
                .firstInteger(arguments)
            guard count == Int64(asked.count) else { return false }
            for key in asked { found.insert(key) }
            (asked, pending) = ([], KnownKeys())
            return true
        }
    }

    /// The most keys one lookup of many (``TargetLookup``, ``listLengths(_:_:owners:)``) binds.
    static let keysPerLookup = 500

    /// An `IN` list of placeholders for `keys` (1 to ``keysPerLookup``), in one of a few sizes so
    /// that a store keeps few such statements, and the keys to bind: the first repeated to fill
    /// it (repeats match no more rows).
    static func keyList<Key>(_ keys: some Collection<Key>) -> (sql: String, keys: [Key]) {
        let size = [1, 8, 64, keysPerLookup].first { $0 >= keys.count }!
        let list = "(" + Array(repeating: "?", count: size).joined(separator: ", ") + ")"
        return (list, Array(keys) + Array(repeating: keys.first!, count: size - keys.count))
    }

    /// The identity of the INSERT record at `offset` (for an error message).
    private static func identity(_ records: UnsafeRawBufferPointer, at offset: Int) -> Value {
        var r = BinaryReader(buffer: records)
        r.i = offset
        return
            (try? {
                _ = try r.byte()
                try r.skipString()
                return try r.value()
            }()) ?? .null
    }

    /// How many rows of `width` parameters one INSERT carries in this store (its dialect's).
    func rowsPerInsert(width: Int) -> Int { db.dialect.rowsPerInsert(width: width) }
}
