import Foundation

/// One committed transaction of a Realm's history.
public struct RealmTransaction: Hashable, Sendable {
    /// The Realm version this transaction produced (1 for the first).
    public var version: Int64
    /// Who wrote it (e.g. `cli`, `adapter:postgres`).
    public var origin: String
    public var committedAt: Timestamp
    public var instructions: [Instruction]
    /// The connector's position this transaction was written for (database → Realm, and the
    /// loader's hand-off), recorded with it; nil for other writers.
    public var sourcePosition: SourcePosition?
}

extension RealmStore {
    /// The transactions of the Realm at `path` after `version`, oldest first, at most `limit`.
    ///
    /// - Throws: `realmNotFound`; and, if `version` is older than what compaction kept, an error
    ///   saying so (history that every registered adapter has processed may be removed).
    public func history(of path: String, after version: Int64 = 0, limit: Int = Int.max) throws -> [RealmTransaction] {
        try history(of: path, after: version, limit: limit, excludingOrigin: nil)
    }

    /// ``history(of:after:limit:)`` without the transactions of origin `excluded` (not even read).
    func history(of path: String, after version: Int64, limit: Int = Int.max, excludingOrigin excluded: String?) throws
        -> [RealmTransaction]
    {
        try read { db in
            let r = try Self.requireRealm(db, path)
            if version < r.compactedThrough {
                throw RealmAdapterError.historyCompacted(path, through: r.compactedThrough)
            }
            let sql =
                "SELECT \(Self.historyColumns) FROM history WHERE realm_id = ? AND version > ? AND "
                + "\(db.dialect.isDistinct("origin", from: "?")) ORDER BY version LIMIT ?"
            let rows = try StoreRow.fetchCursor(
                db.cachedStatement(sql: sql), arguments: [r.id, version, excluded, Int64(clamping: limit)])
            var out: [RealmTransaction] = []
            while let row = try rows.next() { out.append(try Self.transaction(row)) }
            return out
        }
    }

    /// The oldest version whose history is kept (history up to it was compacted; 0 if none was).
    public func compactedThrough(_ path: String) throws -> Int64 {
        try read { db in try Self.requireRealm(db, path).compactedThrough }
    }

    /// The columns ``transaction(_:)`` reads, in its order.
    static let historyColumns = "version, origin, committed_at, instructions, source, position"

    static func transaction(_ row: StoreRow) throws -> RealmTransaction {
        let blob: Data = row[3]
        let source: String? = row[4]
        let position: String? = row[5]
        return RealmTransaction(
            version: row[0], origin: row[1], committedAt: Timestamp(totalNanoseconds: row[2]),
            instructions: try InstructionCodec.decode([UInt8](blob)),
            sourcePosition: source.flatMap { s in position.map { SourcePosition(source: s, position: $0) } })
    }

    /// Removes history of the Realm at `path` that every registered adapter whose path filter
    /// matches it has advanced past. A Realm no adapter follows keeps its whole history, because
    /// it is the only way a future adapter can learn the Realm's contents.
    ///
    /// - Returns: the number of transactions removed.
    @discardableResult
    public func compact(_ path: String) throws -> Int {
        try write { db in
            let r = try Self.requireRealm(db, path)
            guard let horizon = try Self.compactionHorizon(db, r), horizon > r.compactedThrough else { return 0 }
            try db.cachedStatement(sql: "DELETE FROM history WHERE realm_id = ? AND version <= ?").execute(
                arguments: [r.id, horizon])
            let removed = db.changesCount
            try db.cachedStatement(sql: "DELETE FROM object_change WHERE realm_id = ? AND version <= ?").execute(
                arguments: [r.id, horizon])
            try db.cachedStatement(sql: "UPDATE realm SET compacted_through = ? WHERE id = ?").execute(arguments: [
                horizon, r.id,
            ])
            return removed
        }
    }

    /// The lowest cursor among registered adapters following the Realm, or nil if none does.
    static func compactionHorizon(_ db: any StoreConnection, _ r: RealmRow) throws -> Int64? {
        var horizon: Int64?
        let adapters = try StoreRow.fetchAll(
            db,
            sql: """
                SELECT a.name, a.path_regex, coalesce(c.version, 0) FROM adapter a
                LEFT JOIN adapter_cursor c ON c.adapter_id = a.id AND c.realm_id = ?
                """, arguments: [r.id])
        for a in adapters {
            let pattern: String = a[1]
            guard let filter = try? PathFilter(pattern), filter.matches(r.path) else { continue }
            let v: Int64 = a[2]
            horizon = min(horizon ?? v, v)
        }
        return horizon
    }
}
