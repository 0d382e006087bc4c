/// Source positions (``SourcePosition``): how far the store holds each connector's stream.
///
/// A source's positions are recorded in commit order, one ordered stream per writer (an
/// adapter's origin): a store transaction that carries one records it once for the whole store
/// (`source_floor`, by source and origin), not once per Realm it writes, for a database
/// transaction is applied to all its Realms at once or to none. So every Realm holds every
/// transaction of the writer's stream up to the position recorded last: one that touched it was
/// applied, one that did not had nothing for it. Kept per writer, since two adapters on one store
/// may follow two databases whose streams have one name (Postgres slots named alike). Stores
/// written before kept a position per Realm (`source_position`, still written by
/// ``recordSourcePosition(_:in:)``); a Realm's position is the higher of its own and the store's.
///
/// Reads take the writer's `origin`; without it, the highest of any writer counts.
extension RealmStore {
    /// The last source position recorded for `source` with a transaction of the Realm at `path`
    /// (or with the store's, or a load's hand-off), or nil if none was.
    public func sourcePosition(_ source: String, of path: String, origin: String? = nil) throws -> String? {
        try read { db in
            guard let r = try Self.realmRow(db, path) else { return nil }
            let own = try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT position FROM source_position
                        WHERE realm_id = ? AND source_id = (SELECT id FROM source WHERE name = ?)
                        """), arguments: [r.id, source])
            return Self.later(own, try floor(db, source, origin))
        }
    }

    /// For each of `paths` that has a Realm: its version and the last position recorded for
    /// `source` with its transactions, in one read (a database transaction touching many
    /// per-user Realms asks for all of them at once).
    public func standings(of paths: [String], source: String, origin: String? = nil) throws
        -> [String: (version: Int64, position: String?)]
    {
        try read { db in
            let floor = try floor(db, source, origin)
            // One statement for all the paths (each finds its Realm by the path index).
            let rows = try StoreRow.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT p.key, r.version, s.position FROM \(db.dialect.jsonArrayElements("?1", as: "p"))
                        \(db.dialect.orderedJoin) realm r ON r.path = p.value
                        LEFT JOIN source_position s
                               ON s.realm_id = r.id AND s.source_id = (SELECT id FROM source WHERE name = ?2)
                        """), arguments: [Self.jsonArray(paths), source])
            var out: [String: (version: Int64, position: String?)] = [:]
            while let row = try rows.next() { out[paths[row[0]]] = (row[1], Self.later(row[2], floor)) }
            return out
        }
    }

    /// Records `position` as the last of its source in each Realm at `paths`, in one durable
    /// transaction, without a transaction in their history (a hand-off to some of the Realms).
    public func recordSourcePosition(_ position: SourcePosition, in paths: [String]) throws {
        try writeRecordingPosition { db in
            try db.execute(
                sql: """
                    INSERT INTO source_position (realm_id, source_id, position)
                    SELECT r.id, ?, ? FROM \(db.dialect.jsonArrayElements("?", as: "p"))
                    \(db.dialect.orderedJoin) realm r
                    ON r.path = p.value WHERE true
                    ON CONFLICT (realm_id, source_id) DO UPDATE SET position = excluded.position
                    """, arguments: [try sourceId(db, position.source), position.position, Self.jsonArray(paths)])
        }
    }

    /// Records `position` as the last of its source written by `origin` for the whole store, in
    /// one durable transaction, without a transaction in any history: a load's hand-off, whose
    /// snapshot holds every transaction before it for all the Realms the source writes.
    public func recordSourcePosition(_ position: SourcePosition, origin: String) throws {
        try writeRecordingPosition { db in try Self.recordFloor(db, position, origin: origin) }
    }

    private func writeRecordingPosition(_ body: (any StoreConnection) throws -> Void) throws {
        do { try write(.asOpened, body) } catch {
            forgetStoredIds()
            throw error
        }
    }

    /// Records `position` for the whole store, within the caller's transaction (once per store
    /// transaction, however many Realms it writes).
    static func recordFloor(_ db: any StoreConnection, _ position: SourcePosition, origin: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO source_floor (source, origin, position) VALUES (?, ?, ?)
                ON CONFLICT (source, origin) DO UPDATE SET position = excluded.position
                """
        )
        .executeDeferred(arguments: [position.source, origin, position.position])
    }

    /// Whether any Realm holds a transaction from `source` (one query, whatever the number of Realms).
    public func holdsChanges(from source: String, origin: String? = nil) throws -> Bool {
        try read { db in
            try floor(db, source, origin) != nil
                || Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM source_position
                                       WHERE source_id = (SELECT id FROM source WHERE name = ?))
                        """, arguments: [source]) ?? false
        }
    }

    /// The highest position any Realm holds from `source` (positions of one source sort as
    /// strings in commit order), or nil if none does.
    public func latestPosition(from source: String, origin: String? = nil) throws -> String? {
        try read { db in
            let own = try String.fetchOne(
                db,
                sql: """
                    SELECT max(position) FROM source_position WHERE source_id = (SELECT id FROM source WHERE name = ?)
                    """, arguments: [source])
            return Self.later(own, try floor(db, source, origin))
        }
    }

    /// The position `origin` recorded last for `source` for the whole store (any writer's highest
    /// without it).
    private func floor(_ db: any StoreConnection, _ source: String, _ origin: String?) throws -> String? {
        guard let origin else {
            return try String.fetchOne(
                db.cachedStatement(sql: "SELECT max(position) FROM source_floor WHERE source = ?"), arguments: [source])
        }
        return try String.fetchOne(
            db.cachedStatement(sql: "SELECT position FROM source_floor WHERE source = ? AND origin = ?"),
            arguments: [source, origin])
    }

    /// The later of two positions of one source (they sort as strings in commit order).
    private static func later(_ a: String?, _ b: String?) -> String? {
        guard let a, let b else { return a ?? b }
        return max(a, b)
    }
}
