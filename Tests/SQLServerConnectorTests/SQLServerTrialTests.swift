import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

/// What a new user's trial of `init → load → run` against Babelfish found, each as the
/// statement or order that went wrong, so no server is needed (the live suite runs them too).
@Suite struct SQLServerTrialTests {
    /// Child tables whose names sort before their parents', as the trial's did.
    static let mapping: Mapping = {
        let config = try! Configuration(
            json: try! JSONValue(
                parsing: """
                    {"schema": [
                      {"name": "Address", "primaryKey": "id", "properties": {"id": "int", "customer": "Customer?"}},
                      {"name": "OrderProduct", "primaryKey": "id", "properties": {"id": "int", "order": "Orders?"}},
                      {"name": "Orders", "primaryKey": "id", "properties": {"id": "int", "customer": "Customer?"}},
                      {"name": "Customer", "primaryKey": "id", "properties": {"id": "int", "name": "string?"}}],
                     "realm": {"path": "/d"}}
                    """))
        return try! Mapping(config)
    }()

    /// A parent and its child inserted between two rounds stopped the daemon for good: the round
    /// read tables in name order, so the child's link found no parent.
    @Test func aRoundReadsLinksTargetsFirst() {
        let order = SQLServerConnector.followed(Self.mapping).map(\.name)
        func before(_ a: String, _ b: String) -> Bool { order.firstIndex(of: a)! < order.firstIndex(of: b)! }
        #expect(before("Customer", "Address") && before("Customer", "Orders") && before("Orders", "OrderProduct"))
    }

    /// Babelfish assigns no nvarchar, not even NULL, to a datetimeoffset column: a NULL goes as
    /// the literal, with no parameter.
    @Test func aNullIsWrittenAsTheLiteral() {
        let write = DatabaseWrite.upsert(
            table: "Orders", keyColumns: ["id"], row: DatabaseRow(["id": 1, "placed": .null, "note": "x"]), scope: [])
        let s = SQLServerWrites.statement(write, dialect: SQLServerDialect(schema: "dbo"), context: nil)
        #expect(s.values == [1, "x"])
        #expect(s.text.contains("SET [note] = @p2, [placed] = NULL WHERE [id] = @p1"))
        #expect(s.text.contains("VALUES (@p1, @p2, NULL)"))
    }

    /// …and a date travels declared `datetime2(7)` (which every date and time column takes), its
    /// text cut to 100 ns (SQL Server refuses more digits for datetime2).
    @Test func aDateTravelsAsDatetime2() throws {
        let t = try #require(Timestamp(iso8601: "2024-05-01T10:20:30.123456789Z"))
        let call = try SQLServerParameters(SQLStatement("SELECT @p1", [.date(t)]))
        #expect(call.declarations == "@p1 datetime2(7)")
        #expect(call.values == [.text("2024-05-01T10:20:30.1234567")])
        let whole = try #require(Timestamp(iso8601: "2024-05-01T10:20:30Z"))
        #expect(SQLServerParameters.datetime2(whole) == "2024-05-01T10:20:30.000")
    }

    /// A login refused over TLS says only "Adaptive Server connection failed" (Babelfish's
    /// certificate is self-signed): the error names the certificate and the missing password.
    @Test func aFailedLoginNamesTheCertificateAndAMissingPassword() {
        var s = SQLServerSettings(host: "db", user: "sa")
        let text = SQLServerError.cannotConnect(s.displayTarget, Diagnostics(), hints: s.loginHints).message
        #expect(text.contains("trustServerCertificate") && text.contains("SQLSERVER_PASSWORD"))
        s.password = Secret("x")
        s.options.trustServerCertificate = true
        #expect(s.loginHints.isEmpty)
        s.options.trustServerCertificate = false
        s.options.encryption = .off
        #expect(s.loginHints.isEmpty)
    }

    /// `init` against a server without change tracking writes `changeCapture` `triggers`, so the
    /// configuration says how changes are captured.
    @Test func initWritesTheCaptureItFound() {
        var d = SQLServerFirstContactTests.demo
        #expect(!SQLServerConnectorFactory().startingSettings(for: d).contains { $0.key == "changeCapture" })
        d.settings = [.init("changeCapture", .string("triggers"))]
        let members = SQLServerConnectorFactory().startingSettings(for: d)
        #expect(members.map(\.key) == ["trackingName", "changeCapture"])
    }
}
