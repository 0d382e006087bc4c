import Foundation
import Testing

@testable import RealmAdapter
@testable import SQLServerConnector

/// The T-SQL the connector sends, golden: quoting, parameters, the change-tracking tag, the
/// upsert, and batches under SQL Server's 2,100 parameters. No server is involved.
@Suite struct SQLServerWritesTests {
    let tag = "WITH CHANGE_TRACKING_CONTEXT (0x726561)"
    let context = Data("rea".utf8)

    @Test func anUpsertUpdatesUnderAKeyRangeLockThenInserts() {
        let w = DatabaseWrite.upsert(
            table: "Bus Line", keyColumns: ["id"], row: DatabaseRow(["id": 7, "name]": "x", "seats": 40]))
        let s = SQLServerWrites.statement(w, dialect: SQLServerDialect(schema: "dbo"), context: context)
        #expect(
            s.text == """
                \(tag) UPDATE [dbo].[Bus Line] WITH (UPDLOCK, HOLDLOCK) SET [name]]] = @p2, [seats] = @p3 \
                WHERE [id] = @p1;
                IF @@ROWCOUNT = 0 BEGIN \(tag) INSERT INTO [dbo].[Bus Line] ([id], [name]]], [seats]) \
                VALUES (@p1, @p2, @p3); END;
                """)
        #expect(s.values == [7, "x", 40])
    }

    @Test func aKeyOnlyUpsertInsertsIfTheKeyIsMissing() {
        let w = DatabaseWrite.upsert(table: "J", keyColumns: ["a", "b"], row: DatabaseRow(["a": 1, "b": 2]))
        let s = SQLServerWrites.statement(w, dialect: SQLServerDialect(schema: "s"), context: context)
        #expect(
            s.text == """
                IF NOT EXISTS (SELECT 1 FROM [s].[J] WITH (UPDLOCK, HOLDLOCK) WHERE [a] = @p1 AND [b] = @p2) \
                BEGIN \(tag) INSERT INTO [s].[J] ([a], [b]) VALUES (@p1, @p2); END;
                """)
    }

    @Test func deletesUpdatesAndLinkRowsAreTaggedAndAReferenceLooksItsKeyUp() {
        let d = SQLServerDialect(schema: "dbo")
        let delete = SQLServerWrites.statement(
            .delete(table: "T", key: DatabaseRow(["id": 1])), dialect: d, context: context)
        #expect(delete.text == "\(tag) DELETE FROM [dbo].[T] WHERE [id] = @p1;")
        var link = DatabaseRow(["oid": 1, "target": "realm-id"])
        link.references["target"] = KeyReference(table: "Person", column: "PersonId", byColumn: "RealmId")
        let insert = SQLServerWrites.statement(.insert(table: "__Bus__stops", row: link), dialect: d, context: context)
        #expect(
            insert.text == "\(tag) INSERT INTO [dbo].[__Bus__stops] ([oid], [target]) VALUES (@p1, "
                + "(SELECT [PersonId] FROM [dbo].[Person] WHERE [RealmId] = @p2));")
        let gaps = SQLServerWrites.statement(.closeGaps(table: "L"), dialect: d, context: context)
        #expect(gaps.text.hasPrefix("\(tag) UPDATE t SET [idx] = r.n FROM [dbo].[L] AS t JOIN"))
    }

    @Test(arguments: [(1, 5_000), (7, 1_000), (300, 40), (1_024, 9)])
    func batchesStayUnderTheParameterLimitWhateverTheWidth(columns: Int, rows: Int) {
        let writes = (0..<rows).map { i in
            DatabaseWrite.upsert(
                table: "T", keyColumns: ["c0"],
                row: DatabaseRow(
                    Dictionary(uniqueKeysWithValues: (0..<columns).map { ("c\($0)", Value.int(Int64(i))) })))
        }
        let batches = SQLServerWrites.batches(writes, schema: "dbo", context: context)
        #expect(batches.allSatisfy { $0.values.count <= SQLServerParameters.limit && !$0.values.isEmpty })
        #expect(batches.reduce(0) { $0 + $1.values.count } == rows * columns, "every value, once")
        let last = batches.last!
        // Numbered from 1 in each call, in order.
        #expect(last.text.contains("@p\(last.values.count)") && !last.text.contains("@p\(last.values.count + 1)"))
        let perBatch = SQLServerParameters.limit / columns
        #expect(batches.count == (rows + perBatch - 1) / perBatch, "as few calls as fit")
    }

    @Test func aBatchOfOneWriteCarriesIt() {
        let w = DatabaseWrite.delete(table: "T", key: DatabaseRow(["id": 1]))
        let batches = SQLServerWrites.batches([w, w], schema: "dbo", context: context, maxParameters: 1)
        #expect(batches.count == 2 && batches.allSatisfy { $0.write == w })
        #expect(SQLServerWrites.batches([w, w], schema: "dbo", context: context).map(\.write) == [nil])
    }

    @Test func theContextNamesTheAdapterInAtMost128Bytes() {
        #expect(SQLServerWrites.context(name: "a") == Data("realm-adapter:a".utf8))
        #expect(SQLServerWrites.context(name: String(repeating: "x", count: 500)).count == 128)
    }
}

/// Values as `sp_executesql` parameters.
@Suite struct SQLServerParametersTests {
    @Test func valuesAreDeclaredAndEmptyOnesSetInTheStatement() throws {
        let p = try SQLServerParameters(
            SQLStatement("INSERT INTO t VALUES (@p1, @p2, @p3, @p4, @p5)", [1, "", .data(Data()), .null, true]))
        #expect(p.declarations == "@p1 bigint, @p2 nvarchar(max), @p3 varbinary(max), @p4 nvarchar(max), @p5 bit")
        // db-lib sends a value of length 0 as NULL: empty strings and binaries are set in SQL.
        #expect(p.text == "SET @p2 = N''; SET @p3 = 0x; INSERT INTO t VALUES (@p1, @p2, @p3, @p4, @p5)")
        #expect(p.values == [.int(1), .null, .null, .null, .bit(true)])
    }

    @Test func datesDecimalsAndUUIDsTravelAsText() throws {
        let id = UUID()
        let p = try SQLServerParameters(
            SQLStatement(
                "x",
                [
                    .date(Timestamp(iso8601: "2024-05-01T12:00:00.000Z")!), .decimal(DecimalNumber(exactly: "1.50")!),
                    .uuid(id),
                ]))
        #expect(p.values == [.text("2024-05-01T12:00:00.000"), .text("1.50"), .text(id.uuidString)])
    }

    @Test func aStatementOverTheLimitIsRefused() {
        #expect(throws: SQLServerError.self) {
            try SQLServerParameters(SQLStatement("x", Array(repeating: 1, count: 2_099)))
        }
    }
}

/// SQL Server's types against Realm's.
@Suite struct SQLServerTypeTests {
    @Test(arguments: [
        ("bit", ScalarType.bool), ("tinyint", .int), ("BIGINT", .int), ("real", .float), ("float", .double),
        ("money", .decimal), ("numeric", .decimal), ("nvarchar", .string), ("uniqueidentifier", .uuid),
        ("datetime2", .date), ("datetimeoffset", .date), ("date", .date), ("varbinary", .data), ("time", .string),
    ])
    func eachSupportedTypeHasItsRealmType(name: String, scalar: ScalarType) {
        #expect(SQLServerType.scalar(name) == scalar)
    }

    @Test func anUnsupportedTypeIsAClearErrorNamingTheColumn() {
        #expect(SQLServerType.scalar("geography") == nil && SQLServerType.scalar("sql_variant") == nil)
        let e = SQLServerType.unsupported("geography", table: "Stop", column: "location")
        #expect(e.code == .invalidConfiguration && e.context == ["db.table": "Stop", "db.column": "location"])
    }

    @Test func everyRealmTypeHasAColumnTypeAndKeysFitAnIndex() {
        for s in ScalarType.allCases {
            #expect(!SQLServerType.declaration(s).isEmpty)
            #expect(!SQLServerType.declaration(s, key: true).contains("max"))
        }
    }
}

/// What a database lacks, with the statement that fixes each.
@Suite struct SQLServerSetupTests {
    @Test func eachMissingPieceComesWithItsFix() {
        let off = SQLServerSetup.State(databaseTracked: false, snapshotIsolation: false, trackedTables: ["dbo.Bus"])
        let problems = SQLServerSetup.problems(off, database: "My]Db", schema: "dbo", tables: ["Bus", "Bus Stop"])
        #expect(
            problems == [
                "change tracking is off for the database; turn it on: ALTER DATABASE [My]]Db] SET CHANGE_TRACKING = ON "
                    + "(CHANGE_RETENTION = 2 DAYS, AUTO_CLEANUP = ON);",
                "snapshot isolation is off; turn it on: ALTER DATABASE [My]]Db] SET ALLOW_SNAPSHOT_ISOLATION ON;",
                "change tracking is off for table dbo.Bus Stop; turn it on: ALTER TABLE [dbo].[Bus Stop] "
                    + "ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON);",
            ])
        let on = SQLServerSetup.State(databaseTracked: true, snapshotIsolation: true, trackedTables: ["dbo.Bus"])
        #expect(SQLServerSetup.problems(on, database: "d", schema: "dbo", tables: ["Bus"]).isEmpty)
    }

    @Test func grantsCoverTheMappedAndOwnTables() {
        let g = SQLServerSetup.grants(
            user: "foo", schema: "dbo", tables: ["MapTable"], ownTables: ["realm_adapter_state"])
        #expect(g.contains("GRANT ALTER ON SCHEMA::[dbo] TO [foo];"))
        #expect(
            g.contains(
                "GRANT SELECT, INSERT, UPDATE, DELETE, ALTER, VIEW CHANGE TRACKING ON [dbo].[MapTable] TO [foo];"))
        #expect(g.contains { $0.contains("[dbo].[realm_adapter_state]") })
    }
}

/// The DDL of `createSchema` and the change-tracking reads, golden.
@Suite struct SQLServerSchemaTests {
    static let mapping: Mapping = {
        let config = try! Configuration(
            json: try! JSONValue(
                parsing: """
                    {"schema": [
                      {"name": "Stop", "primaryKey": "id", "properties": {"id": "int", "name": "string"}},
                      {"name": "Bus Line", "primaryKey": "id", "properties": {"id": "string", "seats": "int?",
                        "depot": "Stop?", "stops": "Stop[]"}}],
                     "realm": {"path": "/d"}}
                    """))
        return try! Mapping(config)
    }()

    @Test func createSchemaMakesKeyedTablesAndLinkTablesWithPrimaryKeys() {
        let ddl = SQLServerSchema.create(Self.mapping, SQLServerDialect(schema: "dbo"))
        #expect(
            ddl.contains(
                "IF OBJECT_ID(N'[dbo].[Bus Line]', N'U') IS NULL CREATE TABLE [dbo].[Bus Line] "
                    + "([id] nvarchar(450) NOT NULL, [seats] bigint NULL, [depot] bigint NULL, PRIMARY KEY ([id]));"))
        #expect(ddl.contains("CREATE TABLE [dbo].[Stop] ([id] bigint NOT NULL, [name] nvarchar(max) NOT NULL"))
        #expect(ddl.contains("PRIMARY KEY ([oid], [idx])"), "change tracking needs one: \(ddl)")
    }

    @Test func mismatchesNameMissingTablesColumnsAndUnsupportedTypes() {
        let problems = SQLServerSchema.mismatches(
            Self.mapping,
            types: ["Stop": ["id": "int", "name": "geography"], "Bus Line": ["id": "nvarchar", "seats": "int"]])
        #expect(problems.contains { $0.contains("Bus Line.depot") })
        #expect(problems.contains { $0.contains("Stop.name has type geography") })
        #expect(problems.contains { $0.hasPrefix("link table") })
    }

    @Test func aRoundReadsNetChangesJoinedToTheRowsAsTheyAreNow() {
        let s = SQLServerSQL.changes(
            "Bus Line", keyColumns: ["id"], columns: ["id", "at"],
            expressions: ["[id]", "CONVERT(nvarchar(40), [at], 126)"], since: 41, SQLServerDialect(schema: "dbo"))
        #expect(
            s.text
                == "SELECT ct.SYS_CHANGE_OPERATION, ct.SYS_CHANGE_CONTEXT, ct.[id], CASE WHEN t.[id] IS NULL THEN 0 "
                + "ELSE 1 END, t.[id], CONVERT(nvarchar(40), t.[at], 126) FROM CHANGETABLE(CHANGES [dbo].[Bus Line], @p1) "
                + "AS ct LEFT JOIN [dbo].[Bus Line] AS t ON t.[id] = ct.[id] ORDER BY ct.SYS_CHANGE_VERSION")
        #expect(s.values == [41])
    }
}

/// `databasePrimaryKey` (legacy `sqlserverPrimaryKey`): the database generates its key, a RealmId
/// keys the Realm.
@Suite struct SQLServerDatabaseKeyTests {
    static let mapping: Mapping = {
        let config = try! Configuration(
            json: try! JSONValue(
                parsing: """
                    {"schema": [{"name": "Passport", "primaryKey": "RealmId", "databasePrimaryKey": "PassportId",
                      "properties": {"RealmId": "string", "PassportId": "int?", "number": "string"}}],
                     "realm": {"path": "/d"}}
                    """))
        return try! Mapping(config)
    }()

    @Test func theTableIsFollowedByItsRealKeyAndCreatedWithAnIdentity() throws {
        #expect(SQLServerConnector.followed(Self.mapping).map(\.keyColumns) == [["PassportId"]])
        try SQLServerConnector.check(Self.mapping)
        let ddl = SQLServerSchema.create(Self.mapping, SQLServerDialect(schema: "dbo"))
        #expect(ddl.contains("[PassportId] bigint IDENTITY(1, 1) NOT NULL PRIMARY KEY"), "\(ddl)")
        #expect(
            ddl.contains(
                "CREATE UNIQUE INDEX [ux_Passport_RealmId] ON [dbo].[Passport] ([RealmId]) WHERE [RealmId] IS NOT NULL")
        )
    }

    @Test func anUpsertNeverWritesTheGeneratedKey() {
        let w = DatabaseWrite.upsert(
            table: "Passport", keyColumns: ["RealmId"],
            row: DatabaseRow(["RealmId": "r1", "PassportId": 7, "number": "X"]))
        let s = SQLServerWrites.batches(
            [w], schema: "dbo", context: Data("a".utf8), generated: ["Passport": "PassportId"])
        #expect(!s[0].text.contains("[PassportId]") && s[0].values == ["r1", "X"])
    }

    @Test func realmIdsAreWrittenWhereStillEmptyTaggedAndBatched() {
        let a = (1...1_500).map { i in
            RealmIdAssignment(
                table: "Passport", keyColumn: "PassportId", key: .int(Int64(i)), keyType: .int,
                realmIdColumn: "RealmId",
                realmId: .string("id-\(i)"), realmIdType: .string)
        }
        let batches = SQLServerWrites.realmIdUpdates(a, schema: "dbo", context: Data("a".utf8))
        #expect(batches.count == 2 && batches.allSatisfy { $0.values.count <= SQLServerParameters.limit })
        #expect(
            batches[0].text.hasPrefix(
                "WITH CHANGE_TRACKING_CONTEXT (0x61) UPDATE [dbo].[Passport] SET [RealmId] = @p1 "
                    + "WHERE [PassportId] = @p2 AND [RealmId] IS NULL;"))
        #expect(
            batches[1].text.hasPrefix(
                "WITH CHANGE_TRACKING_CONTEXT (0x61) UPDATE [dbo].[Passport] SET [RealmId] = @p1 "))
    }
}
