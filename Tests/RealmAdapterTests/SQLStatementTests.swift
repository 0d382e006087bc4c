import Testing

@testable import RealmAdapter

/// The statements every relational connector runs, built once in core over a dialect.
@Suite struct SQLStatementTests {
    struct Dollar: SQLDialect {
        func quote(_ identifier: String) -> String { "\"" + identifier + "\"" }
        func table(_ name: String) -> String { "s." + quote(name) }
        func parameter(_ n: Int) -> String { "$\(n)" }
    }

    @Test func upsertsUpdatesAndDeletesNumberTheirParametersInColumnOrder() throws {
        let row = DatabaseRow(["note": "x", "id": 1, "n": 2])
        let upsert = try #require(DatabaseWrite.upsert(table: "T", keyColumns: ["id"], row: row).statement(Dollar()))
        #expect(
            upsert.text == #"INSERT INTO s."T" ("id", "n", "note") VALUES ($1, $2, $3) ON CONFLICT ("id") "#
                + #"DO UPDATE SET "n" = EXCLUDED."n", "note" = EXCLUDED."note""#)
        #expect(upsert.values == [1, 2, "x"])
        let updating = DatabaseWrite.update(table: "T", key: DatabaseRow(["id": 1]), values: DatabaseRow(["n": 3]))
        #expect(
            updating.statement(Dollar())
                == SQLStatement(#"UPDATE s."T" SET "n" = $1 WHERE "id" = $2"#, [3, 1], write: updating))
        let deleting = DatabaseWrite.delete(table: "T", key: DatabaseRow(["id": 1]))
        #expect(
            deleting.statement(Dollar()) == SQLStatement(#"DELETE FROM s."T" WHERE "id" = $1"#, [1], write: deleting))
        let clearing = DatabaseWrite.deleteAll(table: "T", matching: DatabaseRow())
        #expect(clearing.statement(Dollar()) == SQLStatement(#"DELETE FROM s."T""#, write: clearing))
        #expect(DatabaseWrite.closeGaps(table: "L").statement(Dollar()) == nil, "each dialect renumbers its own way")
        let nulling = DatabaseWrite.updateAll(
            table: "M", matching: DatabaseRow(["team": 1, "owner": "u"]), values: DatabaseRow(["team": .null]))
        #expect(
            nulling.statement(Dollar())
                == SQLStatement(
                    #"UPDATE s."M" SET "team" = $1 WHERE "owner" = $2 AND "team" = $3"#, [.null, "u", 1], write: nulling
                ))
    }

    @Test func aKeyOnlyUpsertDoesNothingOnConflictAndAReferenceLooksTheKeyUp() throws {
        var row = DatabaseRow(["id": 1, "owner": "realm-id-7"])
        row.references["owner"] = KeyReference(table: "Person", column: "pk", byColumn: "RealmId")
        let s = try #require(
            DatabaseWrite.upsert(table: "T", keyColumns: ["id", "owner"], row: row).statement(
                Dollar(), conflictTarget: ["id"]))
        #expect(
            s.text
                == #"INSERT INTO s."T" ("id", "owner") VALUES ($1, (SELECT "pk" FROM s."Person" WHERE "RealmId" = $2)) "#
                + #"ON CONFLICT ("id") DO NOTHING"#)
        #expect(s.values == [1, "realm-id-7"])
    }
}
