import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

/// Change capture by triggers (`database.changeCapture` `triggers`), without a server: the
/// choice of capture, the statements, and the log read as change tracking would answer it.
/// The live suite runs them on Babelfish.
@Suite struct SQLServerTriggerCaptureTests {
    static func options(_ database: String) throws -> SQLServerOptions { try SQLServerOptions.parsed(database) }

    @Test func changeCaptureIsReadAndAWrongModeIsNamed() throws {
        #expect(try Self.options(#"{"type": "sqlserver", "host": "db"}"#).changeCapture == nil)
        let triggers = try Self.options(#"{"type": "sqlserver", "host": "db", "changeCapture": "triggers"}"#)
        #expect(triggers.changeCapture == .triggers && triggers.summary.contains("changeCapture triggers"))
        #expect {
            _ = try Self.options(#"{"type": "sqlserver", "host": "db", "changeCapture": "cdc"}"#)
        } throws: { e in
            "\(e)".contains("changeCapture") && "\(e)".contains("tracking, triggers")
        }
    }

    /// Babelfish answers its generic number with "function … does not exist"; SQL Server, 195.
    @Test func aServerWithoutChangeTrackingIsRecognized() {
        func error(_ number: Int, _ text: String) -> SQLServerError {
            var e = SQLServerError(.queryFailed, "failed")
            e.serverMessages = [.init(number: number, severity: 16, state: 1, line: 1, procedure: nil, text: text)]
            return e
        }
        #expect(
            SQLServerConnector.isMissingFunction(
                error(33_557_097, "function change_tracking_current_version() does not exist")))
        #expect(
            SQLServerConnector.isMissingFunction(
                error(195, "'CHANGE_TRACKING_CURRENT_VERSION' is not a recognized built-in function name.")))
        #expect(!SQLServerConnector.isMissingFunction(error(208, "Invalid object name 'x'.")))
        #expect(!SQLServerConnector.isMissingFunction(error(33_557_097, "relation \"x\" does not exist")))
    }

    /// Babelfish refuses `WITH CHANGE_TRACKING_CONTEXT`: under triggers the session carries the
    /// tag, and no statement the daemon writes has it.
    @Test func underTriggersNoStatementIsTaggedAndTheSessionIs() {
        let d = SQLServerDialect(schema: "dbo")
        let writes: [DatabaseWrite] = [
            .upsert(table: "Bus", keyColumns: ["id"], row: DatabaseRow(["id": 1, "seats": 40]), scope: []),
            .delete(table: "Bus", key: DatabaseRow(["id": 2])),
            .closeGaps(table: "Bus_stops"),
        ]
        let texts =
            SQLServerWrites.batches(writes, schema: "dbo", context: nil).map(\.text)
            + [SQLServerWrites.marker(adapter: "a", path: "/p", version: 3, d, nil).text]
        #expect(texts.allSatisfy { !$0.contains("CHANGE_TRACKING_CONTEXT") && !$0.hasPrefix(" ") })
        let tagged = SQLServerWrites.batches(writes, schema: "dbo", context: Data("a".utf8)).map(\.text)
        #expect(tagged.allSatisfy { $0.contains("WITH CHANGE_TRACKING_CONTEXT (0x61) ") })
        #expect(
            SQLServerTriggers.tagSession(Data("realm-adapter:x".utf8))
                == "EXEC sp_set_session_context @key = N'realm_adapter', @value = 0x7265616C6D2D616461707465723A78;")
    }

    /// Only snapshot isolation is the database's to turn on; the connector installs the rest.
    @Test func underTriggersOnlySnapshotIsolationIsASetupProblem() {
        let off = SQLServerSetup.State(databaseTracked: false, snapshotIsolation: false, trackedTables: [])
        let problems = SQLServerSetup.problems(
            off, database: "d", schema: "dbo", tables: ["Bus"], capture: .triggers)
        #expect(
            problems == ["snapshot isolation is off; turn it on: ALTER DATABASE [d] SET ALLOW_SNAPSHOT_ISOLATION ON;"])
        let on = SQLServerSetup.State(databaseTracked: false, snapshotIsolation: true, trackedTables: [])
        #expect(SQLServerSetup.problems(on, database: "d", schema: "dbo", tables: ["Bus"], capture: .triggers) == [])
    }

    /// The trigger takes its gate row before it draws a number, tags with the session's context,
    /// and names survive brackets and quotes.
    @Test func theTriggerLocksTheGateFirstAndQuotesNames() throws {
        let t = TrackedTable(name: "Bus's]Stop", keyColumns: ["owner", "pos"])
        let text = SQLServerTriggers.createTrigger(t, SQLServerDialect(schema: "dbo"))
        let gate = try #require(
            text.range(of: "UPDATE [dbo].[realm_adapter_gate] SET n = n + 1 WHERE id = @@SPID % 1024;"))
        let log = try #require(text.range(of: "INSERT INTO [dbo].[realm_adapter_log]"))
        #expect(gate.upperBound < log.lowerBound)
        #expect(text.contains("ON [dbo].[Bus's]]Stop] AFTER INSERT, UPDATE, DELETE"))
        #expect(text.contains("N'Bus''s]Stop'"))
        #expect(text.contains("CAST(SESSION_CONTEXT(N'realm_adapter') AS varbinary(128))"))
        #expect(text.contains("i.[owner] = d.[owner] AND i.[pos] = d.[pos]"))
    }

    /// A trigger's name says what it captures: other key columns or another schema, another name
    /// (so `prepare` replaces it); the same definition, the same name.
    @Test func aTriggersNameFollowsItsDefinition() {
        let a = TrackedTable(name: "Bus", keyColumns: ["id"])
        let b = TrackedTable(name: "Bus", keyColumns: ["code"])
        #expect(SQLServerTriggers.triggerName(a, schema: "dbo") == SQLServerTriggers.triggerName(a, schema: "dbo"))
        #expect(SQLServerTriggers.triggerName(a, schema: "dbo") != SQLServerTriggers.triggerName(b, schema: "dbo"))
        #expect(SQLServerTriggers.triggerName(a, schema: "dbo") != SQLServerTriggers.triggerName(a, schema: "app"))
        #expect(SQLServerTriggers.triggerName(a, schema: "dbo").hasPrefix(SQLServerTriggers.triggerPrefix))
    }

    /// The log's key parts are read as the columns are declared, so the join to the row can
    /// use the table's key.
    @Test func keyPartsAreReadAsTheirColumnsAreDeclared() {
        #expect(
            SQLServerType.declared("nvarchar", length: 450, precision: nil, scale: nil, seconds: nil) == "nvarchar(450)"
        )
        #expect(
            SQLServerType.declared("varbinary", length: -1, precision: nil, scale: nil, seconds: nil)
                == "varbinary(max)")
        #expect(
            SQLServerType.declared("decimal", length: nil, precision: 19, scale: 4, seconds: nil) == "decimal(19, 4)")
        #expect(SQLServerType.declared("datetime2", length: nil, precision: 27, scale: 7, seconds: 7) == "datetime2(7)")
        #expect(SQLServerType.declared("int", length: nil, precision: 10, scale: 0, seconds: nil) == "int")
        let s = SQLServerTriggers.changes(
            TrackedTable(name: "T", keyColumns: ["a", "b"]), keyTypes: ["int", "nvarchar(10)"], columns: ["v"],
            expressions: ["[v]"], after: 3, upTo: 9, SQLServerDialect(schema: "dbo"))
        #expect(s.text.contains("CAST(k1 AS int) AS k1, CAST(k2 AS nvarchar(10)) AS k2"))
        #expect(s.text.contains("ON t.[a] = l.k1 AND t.[b] = l.k2 ORDER BY l.seq"))
        #expect(s.text.contains("seq > @p2 AND seq <= @p3) AS l"))
        #expect(s.values == ["T", 3, 9])
    }

    /// The log has a row per change; the poller takes change tracking's answer: one per key, in
    /// the order of their last changes, the first operation, the last tag, the row as it is.
    @Test func theLogIsReadAsChangeTrackingAnswers() {
        let own = Data("own".utf8)
        func key(_ id: Int64) -> DatabaseRow { DatabaseRow(["id": .int(id)]) }
        func row(_ id: Int64) -> DatabaseRow { DatabaseRow(["id": .int(id), "n": .int(id * 10)]) }
        let logged: [SQLServerTriggerReader.LoggedChange] = [
            .init(number: 5, operation: "U", context: nil, key: key(2), row: row(2)),
            .init(number: 3, operation: "I", context: own, key: key(1), row: row(1)),
            .init(number: 4, operation: "U", context: nil, key: key(1), row: row(1)),
            .init(number: 7, operation: "D", context: own, key: key(3), row: nil),
            .init(number: 6, operation: "U", context: own, key: key(2), row: row(2)),
        ]
        let net = SQLServerTriggerReader.net(logged)
        #expect(net.map(\.key) == [key(1), key(2), key(3)], "by last change: 4, 6, 7")
        #expect(net.map(\.operation) == ["I", "U", "D"])
        #expect(net.map(\.context) == [nil, own, own])
        #expect(net.map(\.row) == [row(1), row(2), nil])
    }
}
