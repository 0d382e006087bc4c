import Foundation

/// A Realm's path, version, number of objects of each type and last change
/// (``RealmStore/summaries(of:)``).
public struct RealmSummary: Sendable, Equatable {
    public var path: String
    public var version: Int64
    /// Per type of its schema, in schema order: the type's name and its number of objects.
    public var counts: [TypeCount]
    /// Who wrote the Realm's last transaction and when; nil when compaction removed it.
    public var lastChange: Change?

    public struct TypeCount: Sendable, Equatable {
        public var type: String
        public var count: Int
    }

    public struct Change: Sendable, Equatable {
        public var origin: String
        public var committedAt: Timestamp
    }
}

extension RealmStore {
    /// The summaries of the Realms at `paths` (those that exist), or of every Realm when nil, in
    /// path order, from one snapshot. The counts come from one query per object type, however
    /// many Realms there are (`realm list` over per-user Realms); a page of paths costs what it
    /// holds (Studio's list of Realms).
    public func summaries(of paths: [String]? = nil) throws -> [RealmSummary] {
        if let paths, paths.isEmpty { return [] }
        return try read { db in
            let only = paths.map {
                " WHERE r.path IN (" + Array(repeating: "?", count: $0.count).joined(separator: ", ") + ")"
            }
            let arguments = StoreArguments((paths ?? []).map(\.storeArgument))
            var counts: [Int64: [String: Int]] = [:]
            for type in try StoreRow.fetchAll(db, sql: "SELECT id, name FROM object_type") {
                let name: String = type[1]
                let sql =
                    only.map {
                        "SELECT t.realm, count(*) FROM t\(type[0] as Int64) t JOIN realm r ON r.id = t.realm\($0) "
                            + "GROUP BY t.realm"
                    } ?? "SELECT realm, count(*) FROM t\(type[0] as Int64) GROUP BY realm"
                let rows = try StoreRow.fetchCursor(db, sql: sql, arguments: arguments)
                while let r = try rows.next() { counts[r[0], default: [:]][name] = r[1] }
            }
            var out: [RealmSummary] = []
            let realms = try StoreRow.fetchCursor(
                db,
                sql: """
                    SELECT r.id, r.path, r.version, r.schema_id, h.origin, h.committed_at FROM realm r
                    LEFT JOIN history h ON h.realm_id = r.id AND h.version = r.version\(only ?? "") ORDER BY r.path
                    """,
                arguments: arguments)
            while let r = try realms.next() {
                let have = counts[r[0]] ?? [:]
                let types = try schema(db, id: r[3]).types
                let origin: String? = r[4]
                let committed: Int64? = r[5]
                out.append(
                    RealmSummary(
                        path: r[1], version: r[2],
                        counts: types.map { .init(type: $0.name, count: have[$0.name] ?? 0) },
                        lastChange: origin.flatMap { o in
                            committed.map { .init(origin: o, committedAt: Timestamp(totalNanoseconds: $0)) }
                        }))
            }
            return out
        }
    }
}
