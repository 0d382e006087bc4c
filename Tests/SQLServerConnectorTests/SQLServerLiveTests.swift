import ConnectorScenarios
import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

/// A fresh database on the SQL Server of `SQLSERVER_URL` (`sqlserver://sa:…@host:1433`), with
/// change tracking and snapshot isolation on, written to as an app would. Changes are captured
/// by `SQLSERVER_CAPTURE` (`tracking` or `triggers`), by default as the connector chooses:
/// triggers where the server has no change tracking (Babelfish).
struct SQLServerScenarioDatabase: ScenarioDatabase {
    static var url: String? { ProcessInfo.processInfo.environment["SQLSERVER_URL"] }
    static var capture: SQLServerOptions.ChangeCapture? {
        ProcessInfo.processInfo.environment["SQLSERVER_CAPTURE"].flatMap(SQLServerOptions.ChangeCapture.init)
    }

    let server: SQLServerSettings
    let name: String
    let app: SQLServerConnection
    let capture: SQLServerOptions.ChangeCapture

    init() async throws {
        let url = try ConnectionString(Self.url!)
        var settings = SQLServerSettings(
            host: url.host ?? "localhost", port: url.port, user: url.user, password: url.password.map(Secret.init))
        settings.options.trustServerCertificate = true
        name = "t_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await SQLServerConnection.connect(settings)
        let n = name
        capture = try await admin.session { s in
            let capture = try SQLServerConnector.capture(s, configured: Self.capture)
            try s.execute("CREATE DATABASE [\(n)];")
            guard capture == .tracking else { return capture }  // Babelfish: snapshot isolation is always on
            try s.execute(
                """
                ALTER DATABASE [\(n)] SET CHANGE_TRACKING = ON (CHANGE_RETENTION = 2 DAYS, AUTO_CLEANUP = ON);
                ALTER DATABASE [\(n)] SET ALLOW_SNAPSHOT_ISOLATION ON;
                """)
            return capture
        }
        admin.close()
        settings.database = name
        server = settings
        app = try await SQLServerConnection.connect(settings)
        try await app.session { s in try s.execute(SQLServerConnector.sessionSettings) }
    }

    /// A round reads every change since the last one, several transactions together.
    static var keepsTransactionsApart: Bool { false }

    var connectors: ConnectorRegistry { .sqlServer }
    var databaseSection: String {
        let password = server.password?.value ?? ""
        return #"{"type": "sqlserver", "host": "\#(server.host)", "port": \#(server.port ?? 1433), "#
            + #""user": "\#(server.user ?? "")", "password": "\#(password)", "database": "\#(name)", "#
            + #""trustServerCertificate": true, "createSchema": true, "pollIntervalMs": 20, "#
            + #""changeCapture": "\#(capture.rawValue)", "#
            + #""retry": {"attempts": 0, "delayMs": 20, "maxDelayMs": 200}}"#
    }

    func sql(_ text: String) async throws -> [[String?]] {
        try await app.session { s in
            try s.query(SQLStatement(text)).rows.map { row in
                row.map { v -> String? in
                    switch v {
                    case .null: nil
                    case .string(let t): t
                    default: v.description
                    }
                }
            }
        }
    }

    static var writesConcurrently: Bool { true }

    func openTransaction(_ text: String) async throws -> @Sendable () async throws -> Void {
        let c = try await SQLServerConnection.connect(server)
        try await c.session { s in
            try s.execute(SQLServerConnector.sessionSettings)
            try s.execute("BEGIN TRANSACTION; " + text)
        }
        return {
            try await c.session { s in try s.execute("COMMIT TRANSACTION;") }
            c.close()
        }
    }

    /// Runs `body` over a fresh database, and drops it after, whether `body` throws or not.
    static func using(_ body: (SQLServerScenarioDatabase) async throws -> Void) async throws {
        let db = try await SQLServerScenarioDatabase()
        do {
            try await body(db)
        } catch {
            await db.remove()
            throw error
        }
        await db.remove()
    }

    func remove() async {
        app.close()
        var admin = server
        admin.database = nil
        guard let c = try? await SQLServerConnection.connect(admin) else { return }
        let n = name
        _ = try? await c.session { s in
            // Babelfish has no ALTER DATABASE; the connections are closed there already.
            try? s.execute("ALTER DATABASE [\(n)] SET SINGLE_USER WITH ROLLBACK IMMEDIATE;")
            try s.execute("DROP DATABASE [\(n)];")
        }
        c.close()
    }
}

/// The core's scenarios against a real SQL Server: skipped unless `SQLSERVER_URL` is set (no SQL
/// Server can run on the project's machines; docs/sqlserver.md says how to run one in a container,
/// or Babelfish). Every live suite nests in this one, so that they run one at a time.
@Suite(
    .serialized,
    .enabled(if: SQLServerScenarioDatabase.url != nil, "set SQLSERVER_URL=sqlserver://sa:…@host:1433 to run"))
struct SQLServerLiveTests {
    @Test(.timeLimit(.minutes(2)), arguments: Scenarios.all(SQLServerScenarioDatabase.self).map(\.0))
    func scenario(_ name: String) async throws {
        let run = Scenarios.all(SQLServerScenarioDatabase.self).first { $0.0 == name }!.1
        try await SQLServerScenarioDatabase.using(run)
    }

    @Test func aStatementErrorCarriesTheServersNumberSeverityAndLine() async throws {
        let db = try await SQLServerScenarioDatabase()
        defer { Task { await db.remove() } }
        await #expect {
            _ = try await db.sql("SELECT * FROM no_such_table")
        } throws: { e in
            let e = e as? SQLServerError
            // Babelfish answers its one generic number (33557097) where SQL Server says 208.
            return e?.code == .queryFailed && [208, 33_557_097].contains(e?.number)
                && (e?.serverMessages.first?.severity ?? 0) >= 16
        }
    }

    /// A statement, its declarations and its values longer than 8,000 bytes travel whole (a
    /// Realm transaction of 500 objects was refused: "type big does not exist", its
    /// declarations cut).
    @Test func longStatementsDeclarationsAndValuesTravelWhole() async throws {
        let db = try await SQLServerScenarioDatabase()
        defer { Task { await db.remove() } }
        let text = String(repeating: "Zoë 東京 ", count: 3_000)
        let bytes = Data((0..<20_000).map { UInt8($0 % 256) })
        let many = (1...1_500).map { Value.int(Int64($0)) }
        let sum = (1...1_500).map { "@p\($0 + 2)" }.joined(separator: " + ")
        let padding = "/* " + String(repeating: "x", count: 10_000) + " */"
        let rows = try await db.app.session { s in
            try s.query(
                SQLStatement(
                    "\(padding) SELECT LEN(@p1 + N'.') - 1, DATALENGTH(@p2), \(sum), CASE WHEN @p1 = N'\(text)' THEN 1 ELSE 0 END",
                    [.string(text), .data(bytes)] + many)
            ).rows
        }
        #expect(rows == [[.int(Int64(text.unicodeScalars.count)), .int(20_000), .int(1_500 * 1_501 / 2), .int(1)]])
    }

    @Test func emptyStringsAndBinariesRoundTripAndNullStaysNull() async throws {
        let db = try await SQLServerScenarioDatabase()
        defer { Task { await db.remove() } }
        let rows = try await db.app.session { s in
            try s.execute("CREATE TABLE t (id int PRIMARY KEY, s nvarchar(10) NULL, b varbinary(10) NULL)")
            try s.query(
                SQLStatement("INSERT INTO t VALUES (1, @p1, @p2), (2, @p3, @p4)", ["", .data(Data()), .null, .null]))
            return try s.query(SQLStatement("SELECT s, b FROM t ORDER BY id")).rows
        }
        #expect(rows == [["", .data(Data())], [.null, .null]])
    }
}
