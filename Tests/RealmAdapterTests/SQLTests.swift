import Testing

@testable import RealmAdapter

/// SQL text keeps names and values apart until a dialect renders it.
@Suite struct SQLTests {
    struct Dollar: SQLDialect {
        func quote(_ identifier: String) -> String { identifier.sqlQuoted("\"", "\"") }
        func table(_ name: String) -> String { quote("s") + "." + quote(name) }
        func parameter(_ n: Int) -> String { "$\(n)" }
    }

    struct Question: SQLDialect {
        func quote(_ identifier: String) -> String { identifier.sqlQuoted("[", "]") }
        func table(_ name: String) -> String { quote(name) }
        func parameter(_ n: Int) -> String { "@P\(n)" }
    }

    @Test func namesAreQuotedAndValuesBoundInTheirOrder() {
        let hostile = #"a"; DROP TABLE x; --"#
        let sql: SQL = "SELECT \(ids: ["id", hostile]) FROM \(table: "T") WHERE \(id: "k") = \(hostile) AND n > \(3)"
        let s = Dollar().statement(sql)
        #expect(s.text == #"SELECT "id", "a""; DROP TABLE x; --" FROM "s"."T" WHERE "k" = $1 AND n > $2"#)
        #expect(s.values == [.string(hostile), 3])
        let t = Question().statement(sql)
        #expect(t.text == #"SELECT [id], [a"; DROP TABLE x; --] FROM [T] WHERE [k] = @P1 AND n > @P2"#)
    }

    @Test func literalsDoubleTheirQuotesAndPiecesJoin() {
        let conditions = SQL.joined(["\(id: "a") = \(1)", "\(id: "b") = \(2)"], separator: " AND ")
        let s = Dollar().statement("DELETE FROM \(table: "T") WHERE \(sql: conditions) -- \(literal: "it's")")
        #expect(s.text == #"DELETE FROM "s"."T" WHERE "a" = $1 AND "b" = $2 -- 'it''s'"#)
        #expect(s.values == [1, 2])
    }

    /// Quoting doubles the closing quote only, byte by byte, and leaves other text (any script,
    /// emoji, NUL) as it is.
    @Test func quotingDoublesTheClosingQuoteOnly() {
        #expect("".sqlQuoted("\"", "\"") == #""""#)
        #expect(#"a"b""#.sqlQuoted("\"", "\"") == #""a""b""""#)
        #expect("it's".sqlQuoted("'", "'") == "'it''s'")
        #expect("a]b[c".sqlQuoted("[", "]") == "[a]]b[c]")
        #expect("Café \"☕️\" 名前\u{0}".sqlQuoted("\"", "\"") == "\"Café \"\"☕️\"\" 名前\u{0}\"")
    }
}
