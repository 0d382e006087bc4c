import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

/// A database workload whose every transaction leaves a mark in the Realm's history that a
/// second application of it cannot hide.
///
/// Applying a database transaction again is usually invisible in a Realm's contents: an
/// upsert of a row the Realm already has records nothing. So transaction `k` here also inserts
/// and deletes a token row (applied again, the token is inserted again) and sets a counter row
/// to `k` (applied out of order, the counter goes back). With history's source positions
/// (each at most once, increasing), a replay or a loss cannot pass unseen.
struct GuaranteeWorkload {
    static let schema =
        #"[{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "origin": "string"}}]"#
    /// The type of ``schema``, for Realm transactions written before the daemon made the Realm.
    static var itemType: ObjectSchema { try! Schema(json: JSONValue(parsing: schema))[type: "Item"]! }
    /// The counter row's id; tokens have negative ids, items positive ones.
    static let counter: Int64 = 0

    let pg: PostgresConnection

    /// Creates the counter row (the table exists: the daemon's `createSchema` made it).
    func start() async throws {
        _ = try await pg.sql(#"INSERT INTO "Item" VALUES (0, 0, 'counter')"#)
    }

    /// Database transaction `k`: item `k`, a token inserted and deleted, the counter set to `k`.
    func commit(_ k: Int) async throws {
        try await pg.session { s in
            try s.transaction {
                try s.query(#"INSERT INTO "Item" VALUES ($1, $1, 'db')"#, [String(k)])
                try s.query(#"INSERT INTO "Item" VALUES ($1, 0, 'token')"#, [String(-k)])
                try s.query(#"DELETE FROM "Item" WHERE id = $1"#, [String(-k)])
                try s.query(#"UPDATE "Item" SET n = $1 WHERE id = 0"#, [String(k)])
            }
        }
    }

    /// Every row as (id, n, origin), ordered by id.
    func databaseItems() async throws -> [[String?]] {
        try await pg.sql(#"SELECT id::text, n::text, origin FROM "Item" ORDER BY "Item".id"#)
    }

    /// Waits until the Realm holds exactly the database's rows; records where they differ if not.
    func waitUntilTheRealmHoldsEveryRow(_ store: RealmStore, timeout: Duration = .seconds(60)) async throws {
        var difference = ""
        do {
            try await eventually("the Realm to hold every row", timeout: timeout) {
                let (d, r) = (try await databaseItems(), try Self.realmItems(store))
                difference = PostgresIntegration.LoaderTests.difference(d, r)
                return d == r
            }
        } catch {
            Issue.record("database vs Realm: \(difference)")
            throw error
        }
    }

    static func realmItems(_ store: RealmStore, _ path: String = "/SQLDemo") throws -> [[String?]] {
        guard try store.contains(path), try store.schema(of: path)[type: "Item"] != nil else { return [] }
        return try store.objects(of: "Item", in: path).map { o in
            [o.identity.description, o.values["n"]!.description, o.values["origin"]!.description]
        }
    }

    /// What the Realm's history shows against exactly-once, database → Realm (see ``HistoryAudit``).
    static func problems(_ store: RealmStore, _ path: String = "/SQLDemo") throws -> [String] {
        try HistoryAudit.problems(store, path)
    }
}

/// Reads a Realm's whole history (an adapter that never advances keeps it) for the marks a
/// database transaction applied twice, lost or out of order leaves on `Item` objects (id, n).
enum HistoryAudit {
    /// Source positions repeated or out of order; tokens (negative ids) inserted more than
    /// once; an object's `n` going back (the workloads only ever raise it, so a lower value
    /// means an older transaction applied again after a newer one). Empty when every database
    /// transaction was applied once, in order.
    static func problems(_ store: RealmStore, _ path: String = "/SQLDemo") throws -> [String] {
        var problems: [String] = []
        var lastPosition: SourcePosition?
        var tokens: [Value: Int] = [:]
        var lastN: [Value: Int64] = [:]
        for tx in try store.history(of: path) {
            if let p = tx.sourcePosition, tx.instructions.contains(where: { !$0.isSchemaChange }) {
                if let last = lastPosition, last.source == p.source, p.position <= last.position {
                    problems.append("version \(tx.version): position \(p.position) after \(last.position)")
                }
                lastPosition = p
            }
            for instruction in tx.instructions {
                switch instruction {
                case .insert("Item", let id, let values), .set("Item", let id, let values):
                    if case .int(let i) = id, i < 0, case .insert = instruction { tokens[id, default: 0] += 1 }
                    guard case .int(let n)? = values["n"] else { continue }
                    if let last = lastN[id], n < last {
                        problems.append("version \(tx.version): \(id).n \(n) after \(last)")
                    }
                    lastN[id] = n
                case .delete("Item", let id):
                    lastN[id] = nil
                default:
                    break
                }
            }
        }
        for (id, count) in tokens where count > 1 { problems.append("token \(id) inserted \(count) times") }
        return problems
    }
}

/// Counts every write the database receives per row of `"Item"` (an audit trigger), to see a
/// Realm transaction written twice, or a database row written back to itself.
enum WriteAudit {
    static func install(_ pg: PostgresConnection) async throws {
        _ = try await pg.sql(
            """
            CREATE TABLE item_writes (id bigint NOT NULL, op text NOT NULL, xid bigint NOT NULL DEFAULT txid_current());
            CREATE FUNCTION audit_item() RETURNS trigger AS $$ BEGIN
              INSERT INTO item_writes (id, op) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END, TG_OP);
              RETURN NULL; END $$ LANGUAGE plpgsql;
            CREATE TRIGGER audit_item AFTER INSERT OR UPDATE OR DELETE ON "Item" FOR EACH ROW EXECUTE FUNCTION audit_item();
            """)
    }

    /// Rows in `ids` written other than exactly once, as "id: count".
    static func notWrittenOnce(_ pg: PostgresConnection, _ ids: ClosedRange<Int>) async throws -> [String] {
        try await pg.sql(
            """
            SELECT i::text || ': ' || count(w.id)::text FROM generate_series($1::bigint, $2::bigint) i
            LEFT JOIN item_writes w ON w.id = i GROUP BY i HAVING count(w.id) <> 1 ORDER BY i
            """, [String(ids.lowerBound), String(ids.upperBound)]
        ).map { $0[0] ?? "" }
    }
}
