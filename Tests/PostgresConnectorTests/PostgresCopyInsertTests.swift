import Foundation
import Testing

@testable import PostgresStore
@testable import RealmAdapter

/// Which of the store's INSERTs go as a `COPY`, and the text of their rows: what the server
/// reads back is checked on a real one by the store's suites (`BulkValuePropertyTests`).
@Suite struct PostgresCopyInsertTests {
    static func insert(_ table: String, _ columns: [String], rows: Int) -> String {
        RealmWriter.InsertPlan.sql(table, columns, rows: rows)
    }

    @Test func theStoresLongInsertsOfRowsAreCopies() throws {
        let copy = try #require(PostgresCopyInsert(Self.insert("t1", ["realm", "key", "c1"], rows: 64)))
        #expect(copy.sql == "COPY t1 (realm, key, c1) FROM STDIN")
        #expect(copy.width == 3 && copy.count == 192)
        let list = try #require(PostgresCopyInsert(RealmWriter.listInsertSQL("l7", rows: 100)))
        #expect(list.sql == "COPY l7 (realm, owner, idx, value) FROM STDIN")
    }

    static func rows(_ row: String, _ count: Int = 64) -> String {
        Array(repeating: row, count: count).joined(separator: ", ")
    }

    static let others: [String] = [
        "INSERT INTO t (a) VALUES " + rows("(?)", 63),
        "INSERT INTO t (a) VALUES " + rows("(?)") + " ON CONFLICT DO NOTHING",
        "INSERT INTO t (a) VALUES " + (1...64).map { "(?\($0))" }.joined(separator: ", "),
        "INSERT INTO t (a) VALUES " + rows("(lower(?))"),
        "INSERT INTO t (a, b) VALUES " + rows("(?, 1)"),
        "INSERT INTO t (a) SELECT ? FROM s",
        "UPDATE t SET a = ?",
    ]

    @Test(arguments: others) func otherStatementsAreNot(_ sql: String) {
        #expect(PostgresCopyInsert(sql) == nil, "\(sql.prefix(60))")
    }

    @Test func valuesAreWrittenAsTheirParametersTextAndKeysAsTheirBytes() throws {
        var copy = try #require(PostgresCopyInsert(Self.insert("t", ["a", "b", "c", "d", "e"], rows: 64)))
        copy.bind(at: 1) { PostgresCopyInsert.append(StoredValue.null, to: &$0) }
        copy.bind(at: 2) { PostgresCopyInsert.append(StoredValue.text("a\tb\nc\r\\N"), to: &$0) }
        copy.bind(at: 3) { PostgresCopyInsert.append(StoredValue.blob(Data([0, 0xAB])), to: &$0) }
        try copy.bind(at: 4) { try PostgresCopyInsert.append(key: .integer(-1), to: &$0) }
        copy.bind(at: 5) { PostgresCopyInsert.append(StoredValue.real(-.infinity), to: &$0) }
        let fields = [#"\N"#, #"a\tb\nc\r\\N"#, #"\\x00ab"#, #"\\x017fffffffffffffff"#, "-Infinity"]
        #expect(String(decoding: copy.data, as: UTF8.self) == fields.joined(separator: "\t") + "\n")
        #expect(!copy.isComplete)
    }

    @Test func rowsBoundOutOfOrderAreNeverSentAndBindingFromTheFirstStartsAnew() throws {
        var copy = try #require(PostgresCopyInsert(Self.insert("t", ["a"], rows: 64)))
        for i in 1...64 where i != 7 { copy.bind(at: Int32(i)) { $0 += Array("x".utf8) } }
        #expect(!copy.isComplete && copy.outOfOrder == 8)
        for i in 1...64 { copy.bind(at: Int32(i)) { $0 += Array("y".utf8) } }
        #expect(copy.isComplete && copy.data.count == 128)
        struct Refused: Error {}
        #expect(throws: Refused.self) { try copy.bind(at: 1) { _ in throw Refused() } }
        #expect(!copy.isComplete && copy.outOfOrder == 1)
    }
}
