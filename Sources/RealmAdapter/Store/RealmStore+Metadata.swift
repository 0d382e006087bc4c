extension RealmStore {
    /// A value the store keeps for the tools that use it (the loader records whether a load
    /// finished, so the daemon never starts from a half-loaded store), or nil.
    public func metadata(_ key: String) throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM metadata WHERE key = ?", arguments: [key]) }
    }

    /// The metadata whose keys start with `prefix`, in key order.
    public func metadata(prefix: String) throws -> [(key: String, value: String)] {
        try read { db in
            try StoreRow.fetchAll(
                db, sql: "SELECT key, value FROM metadata WHERE substr(key, 1, ?) = ? ORDER BY key",
                arguments: [prefix.unicodeScalars.count, prefix])
        }.map { (key: $0[0], value: $0[1]) }
    }

    /// Sets (or, with nil, removes) a metadata value. Always durable, even in a store opened
    /// with `durable: false`: the commit syncs the write-ahead log, so every transaction
    /// committed before it is on disk too (a loader's closing mark covers its whole load).
    public func setMetadata(_ key: String, _ value: String?) throws {
        try write(.flushed) { db in
            if let value {
                try db.execute(
                    sql: """
                        INSERT INTO metadata (key, value) VALUES (?, ?)
                        ON CONFLICT (key) DO UPDATE SET value = excluded.value
                        """, arguments: [key, value])
            } else {
                try db.execute(sql: "DELETE FROM metadata WHERE key = ?", arguments: [key])
            }
        }
    }

    /// Runs `body` (a bulk load) with the indexes of links left out of the types it registers,
    /// and builds every missing one after it: SQLite builds an index from the sorted rows several
    /// times faster than it keeps one up to date row by row, in random order. Indexes missing
    /// after an interrupted load are built before `body` as well (the next load mends them; the
    /// daemon never starts from an interrupted load). Lookups stay correct without them, only
    /// slower.
    public func withLinkIndexesDeferred<T>(_ body: () throws -> T) throws -> T {
        try ensureLinkIndexes()
        layout.linkIndexesDeferred.store(true, ordering: .relaxed)
        defer { layout.linkIndexesDeferred.store(false, ordering: .relaxed) }
        let result = try body()
        try ensureLinkIndexes()
        return result
    }

    func ensureLinkIndexes() throws {
        try write { db in try layout.ensureLinkIndexes(db: db) }
    }
}
