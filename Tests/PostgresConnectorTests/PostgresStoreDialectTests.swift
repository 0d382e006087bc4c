import Foundation
import GRDB
import RealmAdapter
import Testing

@testable import PostgresConnector
@testable import PostgresStore
@testable import RealmAdapter

extension PostgresIntegration {
    /// The store's two dialects, each run on its own engine, answer alike: the query engine's
    /// text conditions over awkward values and patterns, JSON arrays of paths and pairs,
    /// greatest and least, distinct lists, no limit.
    @Suite struct PostgresStoreDialectTests {
        static let texts: [String?] = [nil, "", "a", "abc", "ABC", "aBc", "b%c", "a_c", "x\\y", "[a]", "é", "日本"]
        static let values = [
            "", "a", "b", "ab", "bc", "abc", "c", "*", "a*", "*c", "?b?", "a?c", "%", "_", "\\", "[a]", "a%",
            "a_c", "b%c", "é", "本",
        ]

        @Test func textConditionsHoldAlikeOnBothEngines() throws {
            let pg = try PostgresConnection.connectSync(TestServer.settings)
            defer { pg.close() }
            let sqlite = try DatabaseQueue()
            var checked = 0
            for op in ["=", "<>", "beginsWith", "endsWith", "contains", "like"] {
                // Case-insensitive on ASCII only: SQLite's lower() folds nothing else.
                for ci in [false, true] {
                    for x in Self.texts where !ci || x?.allSatisfy(\.isASCII) != false {
                        for v in Self.values where !ci || v.allSatisfy(\.isASCII) {
                            let inSQLite = try sqlite.read { db in
                                try Self.holds(op, ci, x, v, SQLiteDialect(), column: "(SELECT ? AS x) t") { sql, a in
                                    try Bool.fetchOne(db, sql: sql, arguments: StatementArguments(a))!
                                }
                            }
                            let inPostgres = try pg.sessionSync { s in
                                try Self.holds(
                                    op, ci, x, v, PostgresStoreDialect(),
                                    column: #"(SELECT ?::text COLLATE "C" AS x) t"#
                                ) { sql, a in
                                    try s.query(PostgresPlaceholders.numbered(sql), a).rows[0][0] == "t"
                                }
                            }
                            #expect(inSQLite == inPostgres, "\(x ?? "NULL") \(op)\(ci ? "[c]" : "") \(v)")
                            checked += 1
                        }
                    }
                }
            }
            #expect(checked > 1_000)
        }

        /// Whether `x op v` holds, as the query engine writes the condition in `dialect`.
        static func holds(
            _ op: String, _ ci: Bool, _ x: String?, _ v: String, _ d: any StoreDialect, column: String,
            _ run: (String, [String?]) throws -> Bool
        ) throws -> Bool {
            let (a, b) = ci ? ("lower(t.x)", "lower(?)") : ("t.x", "?")
            var bound = [v]
            let condition: String
            switch op {
            case "=": condition = "\(a) = \(b)"
            case "<>": condition = d.isDistinct(a, from: b)
            case "beginsWith":
                let (c, n) = d.beginsWith(a, b)
                (condition, bound) = (c, Array(repeating: v, count: n))
            case "endsWith":
                let (c, n) = d.endsWith(a, b, column: "t.x")
                (condition, bound) = (c, Array(repeating: v, count: n))
            case "contains": condition = d.contains(a, b)
            default: (condition, bound) = (d.like(a, b), [d.likePattern(v)])
            }
            let sql =
                "SELECT CASE WHEN \(d.definite(condition)) THEN \(d.literal(true)) ELSE \(d.literal(false)) END FROM \(column)"
            return try run(sql, bound + [x])  // the condition's parameters come first in the text
        }

        @Test func jsonArraysGreatestLeastListsAndNoLimitAnswerAlike() throws {
            let pg = try PostgresConnection.connectSync(TestServer.settings)
            defer { pg.close() }
            let sqlite = try DatabaseQueue()
            let paths = RealmStore.jsonArray(["/a", "/b é", "/c\"q", "/d'q"])
            let pairs = RealmStore.jsonArray([(path: "/a", number: 5), (path: "/b", number: -7)])
            @Sendable func statements(_ d: any StoreDialect) -> [(String, [String?])] {
                [
                    ("SELECT p.key, p.value FROM \(d.jsonArrayElements("?", as: "p")) ORDER BY p.key", [paths]),
                    (
                        "SELECT \(d.jsonElement("p.value", 0, integer: false)), "
                            + "\(d.jsonElement("p.value", 1, integer: true)) + 1 "
                            + "FROM \(d.jsonArrayElements("?", as: "p")) ORDER BY p.key", [pairs]
                    ),
                    ("SELECT \(d.greatest("3", "-2", "7")), \(d.least("3", "-2", "7"))", []),
                    (
                        "SELECT \(d.distinctList("o")) FROM (SELECT 'x' AS o UNION ALL SELECT 'x' UNION ALL SELECT 'y') s",
                        []
                    ),
                ]
            }
            let inSQLite = try sqlite.read { db in
                try statements(SQLiteDialect()).map { sql, a in
                    try Row.fetchAll(db, sql: sql, arguments: StatementArguments(a)).map { r in
                        (0..<r.count).map { Self.text(r[$0] as DatabaseValue) }
                    }
                }
            }
            let inPostgres = try pg.sessionSync { s in
                try statements(PostgresStoreDialect()).map { sql, a in
                    try s.query(PostgresPlaceholders.numbered(sql), a).rows.map { $0.map { $0 ?? "NULL" } }
                }
            }
            // A distinct list's order is the engine's own.
            var (a, b) = (inSQLite, inPostgres)
            for r in [3] {
                a[r] = [[a[r][0][0].split(separator: ",").sorted().joined(separator: ",")]]
                b[r] = [[b[r][0][0].split(separator: ",").sorted().joined(separator: ",")]]
            }
            #expect(a == b)
            #expect(b[0].map { $0[1] } == ["/a", "/b é", "/c\"q", "/d'q"])
            #expect(b[1] == [["/a", "6"], ["/b", "-6"]])
            let unlimited = try pg.sessionSync { s in
                try s.query(
                    "SELECT n FROM generate_series(1, 3) n LIMIT $1",
                    parameters: [PostgresStoreDialect().noLimit == .null ? nil : .text("-1")])
            }
            #expect(unlimited.rows.count == 3)
        }

        /// A value as Postgres's text format shows it.
        static func text(_ v: DatabaseValue) -> String {
            switch v.storage {
            case .null: "NULL"
            case .int64(let n): String(n)
            case .double(let d): String(d)
            case .string(let s): s
            case .blob(let d): "\\x" + d.map { String(format: "%02x", $0) }.joined()
            }
        }

        @Test func placeholdersAreNumberedAsSQLiteNumbersThem() {
            #expect(PostgresPlaceholders.numbered("a = ? AND b = ?") == "a = $1 AND b = $2")
            #expect(PostgresPlaceholders.numbered("v = ?1 WHERE id = ?3 OR x = ?") == "v = $1 WHERE id = $3 OR x = $4")
            #expect(PostgresPlaceholders.numbered("x = '?' AND \"a?\" = ? -- ?") == "x = '?' AND \"a?\" = $1 -- $2")
            #expect(PostgresPlaceholders.numbered("x = 'it''s ?' AND y = ?") == "x = 'it''s ?' AND y = $1")
        }
    }
}
