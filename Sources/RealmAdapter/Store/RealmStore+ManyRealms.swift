import Foundation

/// A store transaction's bookkeeping for many Realms at once: a load of per-user Realms writes
/// thousands of them in one transaction, and looking each one up, creating its row and its
/// adapters' first cursors one statement at a time was a round trip each on a store across a
/// network (and a statement each on SQLite).
extension RealmStore {
    /// The rows of the Realms at `paths` (distinct) that exist, by path, many per statement.
    static func realmRows(_ db: any StoreConnection, _ paths: [String]) throws -> [String: RealmRow] {
        var rows: [String: RealmRow] = [:]
        for start in stride(from: 0, to: paths.count, by: RealmWriter.keysPerLookup) {
            let chunk = paths[start..<min(start + RealmWriter.keysPerLookup, paths.count)]
            let (list, keys) = RealmWriter.keyList(chunk)
            let stmt = try db.cachedStatement(
                sql: "SELECT id, schema_id, version, compacted_through, path FROM realm WHERE path IN \(list)")
            stmt.reset()
            defer { stmt.reset() }
            for (k, path) in keys.enumerated() { try stmt.bind(.text(path), at: Int32(k + 1)) }
            while try stmt.step() {
                guard case .text(let path) = stmt.column(4) else { continue }
                rows[path] = RealmRow(
                    id: stmt.int64(0), path: path, schemaId: stmt.int64(1), version: stmt.int64(2),
                    compactedThrough: stmt.int64(3))
            }
        }
        return rows
    }

    /// Realms created in a transaction and their adapters' first cursors, written together at
    /// its end (before, nothing reads them: a Realm's row is written after its objects anyway).
    struct NewRealms {
        /// id, path, schema id, version, creation time.
        var realms: [(Int64, String, Int64, Int64, Int64)] = []
        /// adapter id, Realm id, version.
        var cursors: [(Int64, Int64, Int64)] = []

        func write(_ db: any StoreConnection) throws {
            try Self.insert(db, "realm (id, path, schema_id, version, created_at)", width: 5, realms.count) { i in
                let r = realms[i]
                return [r.0, r.1, r.2, r.3, r.4]
            }
            // A cursor of a Realm id used before (the Realm deleted) is moved only from 0, as one by one.
            try Self.insert(
                db, "adapter_cursor (adapter_id, realm_id, version)", width: 3, cursors.count,
                conflict: """
                    ON CONFLICT (adapter_id, realm_id) DO UPDATE SET version = excluded.version
                    WHERE adapter_cursor.version = 0
                    """
            ) { i in
                let c = cursors[i]
                return [c.0, c.1, c.2]
            }
        }

        /// Inserts `count` rows of `width` values into `target`, as many per statement as the
        /// dialect takes. Statements come in a few lengths (the longest, then 64, 8 and 1 rows
        /// for the rest), so that a store prepares and keeps few of them whatever the counts.
        private static func insert(
            _ db: any StoreConnection, _ target: String, width: Int, _ count: Int, conflict: String = "",
            row: (Int) -> StoreArguments
        ) throws {
            let longest = db.dialect.rowsPerInsert(width: width)
            let lengths = [longest, 64, 8, 1].filter { $0 <= longest }
            let one = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
            var start = 0
            while start < count {
                let rows = lengths.first { $0 <= count - start }!
                var arguments = StoreArguments([])
                for i in start..<start + rows { arguments.values += row(i).values }
                let values = Array(repeating: one, count: rows).joined(separator: ", ")
                try db.cachedStatement(sql: "INSERT INTO \(target) VALUES \(values) \(conflict)")
                    .execute(arguments: arguments)
                start += rows
            }
        }
    }
}
