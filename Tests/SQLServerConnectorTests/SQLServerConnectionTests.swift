import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

#if canImport(Glibc)
    import Glibc
#endif

/// FreeTDS is real here; only a SQL Server is missing. So every way of not reaching one is
/// tested for real: each gives a clear error with db-lib's numbers, and never the password.
@Suite(.serialized) struct SQLServerConnectionTests {
    static let password = Secret("s3cr3t-Pa55")

    /// A TCP port on 127.0.0.1 that listens (`listening`) but never answers, or that nothing
    /// listens on. The socket is closed when `body` returns.
    static func withPort<T>(listening: Bool, _ body: (Int) async throws -> T) async throws -> T {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        if listening { listen(fd, 8) }
        return try await body(port)
    }

    func settings(host: String = "127.0.0.1", port: Int, timeout: Int = 3) -> SQLServerSettings {
        var o = SQLServerOptions()
        o.encryption = .off
        return SQLServerSettings(
            host: host, port: port, user: "sa", password: Self.password, database: "app", options: o,
            connectTimeout: timeout)
    }

    /// A login started at once on a thread of its own, timed there: under a loaded run, the
    /// time a test's task waits to be resumed (other suites hold the few threads of the
    /// cooperative pool, a CI run found 30 s and more) is not the login's.
    final class Login: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var outcome: (error: SQLServerError?, took: Duration)?

        init(_ settings: SQLServerSettings) {
            Thread { [self] in
                let started = ContinuousClock.now
                do {
                    try SQLServerConnection.connectSync(settings).close()
                    outcome = (nil, ContinuousClock.now - started)
                } catch {
                    outcome = (error as? SQLServerError, ContinuousClock.now - started)
                }
                done.signal()
            }.start()
        }

        /// The login's error (nil if it logged in) and how long it took.
        var result: (error: SQLServerError?, took: Duration) {
            get async {
                await withCheckedContinuation { continuation in
                    Thread { [self] in
                        done.wait()
                        continuation.resume(returning: outcome!)
                    }.start()
                }
            }
        }
    }

    func failure(_ settings: SQLServerSettings) async -> SQLServerError? { await Login(settings).result.error }

    @Test func aRefusedConnectionSaysSoAtOnce() async throws {
        try await Self.withPort(listening: false) { port in
            let (error, took) = await Login(settings(port: port, timeout: 60)).result
            let e = try #require(error)
            #expect(e.code == .connectionFailed && e.isTransient)
            #expect(e.libraryErrors.contains { $0.number == 20009 && $0.osError == 111 }, "SYBECONN, ECONNREFUSED")
            #expect(e.message.contains("127.0.0.1:\(port)/app") && e.message.contains("connection refused"))
            // Not a wait for the login timeout (60 s), whatever else logs in meanwhile.
            #expect(took < .seconds(10), "\(took)")
            #expect(!"\(e)".contains(Self.password.value) && !e.debugDescription.contains(Self.password.value))
        }
    }

    /// Each login carries its own timeouts: one that waits for a silent server (or a slow DNS
    /// answer) never holds up another login with other timeouts, and never changes them.
    @Test(.timeLimit(.minutes(1)))
    func aLoginNeverWaitsForAnotherWithOtherTimeouts() async throws {
        try await Self.withPort(listening: true) { silent in
            let waiting = Login(settings(port: silent, timeout: 12))
            try await Task.sleep(for: .milliseconds(500))
            try await Self.withPort(listening: false) { refused in
                let (error, took) = await Login(settings(port: refused, timeout: 60)).result
                let e = try #require(error)
                #expect(e.libraryErrors.contains { $0.osError == 111 }, "ECONNREFUSED: \(e.libraryErrors)")
                #expect(took < .seconds(6), "waited \(took) for the other login")
            }
            let (error, took) = await waiting.result
            let e = try #require(error)
            #expect(e.libraryErrors.contains { $0.number == 20003 }, "its own timeout: \(e.libraryErrors)")
            #expect(took >= .seconds(11) && took < .seconds(16), "\(took)")
        }
    }

    @Test func anUnknownHostIsNamed() async throws {
        let e = try #require(await failure(settings(host: "no-such-host.invalid", port: 1433)))
        #expect(e.code == .connectionFailed)
        #expect(e.libraryErrors.contains { $0.number == 20013 }, "SYBEUHST")
        #expect(e.message.contains("no-such-host.invalid:1433"))
    }

    @Test(.timeLimit(.minutes(1)))
    func aServerThatNeverAnswersTimesOutAfterConnectTimeout() async throws {
        try await Self.withPort(listening: true) { port in
            let (error, waited) = await Login(settings(port: port, timeout: 2)).result
            let e = try #require(error)
            #expect(e.code == .connectionFailed)
            #expect(e.libraryErrors.contains { $0.number == 20003 }, "SYBETIME: \(e.libraryErrors)")
            #expect(waited >= .seconds(2) && waited < .seconds(10), "\(waited)")
        }
    }

    @Test func eachServerGetsAFreeTDSSectionWithoutCredentials() {
        var s = settings(host: "db.example.com", port: 1444)
        s.options.encryption = .require
        #expect(
            s.freetdsSection == """
                    host = db.example.com
                    port = 1444
                    tds version = 7.4
                    client charset = UTF-8
                    encryption = require
                    ca file = system
                    check certificate hostname = yes
                    connect timeout = 3
                """)
        s.options.queryTimeout = 30
        #expect(s.freetdsSection.hasSuffix("connect timeout = 3\n    timeout = 30"), "\(s.freetdsSection)")
        s.options.trustServerCertificate = true
        s.options.instance = "SQLEXPRESS"
        #expect(!s.freetdsSection.contains("ca file") && s.freetdsSection.contains("instance = SQLEXPRESS"))
        #expect(!s.freetdsSection.contains("port ="), "FreeTDS refuses an instance with a port")
        #expect(!s.freetdsSection.contains(Self.password.value) && !s.freetdsSection.contains("sa"))
        #expect(s.freetdsSectionName != settings(host: "db.example.com", port: 1444).freetdsSectionName)
    }
}

/// The connector's members of the `database` section.
@Suite struct SQLServerOptionsTests {
    func options(_ json: String, port: Int? = nil) throws -> SQLServerOptions {
        var r = try JSONObjectReader(try JSONValue(parsing: json), path: "database", code: .invalidConfiguration)
        let o = try SQLServerOptions(&r, port: port)
        try r.finish()
        return o
    }

    func error(_ json: String, port: Int? = nil) -> RealmAdapterError? {
        do {
            _ = try options(json, port: port)
            return nil
        } catch { return error as? RealmAdapterError }
    }

    @Test func defaultsAndSummary() throws {
        let o = try options("{}")
        #expect(o.encryption == .request && !o.trustServerCertificate && o.pollIntervalMs == 1000 && o.summary == [])
        let set = try options(#"{"instance": "SQLEXPRESS", "encryption": "require", "queryTimeout": 30}"#)
        #expect(set.summary == ["instance SQLEXPRESS", "encryption require", "queryTimeout 30 s"])
    }

    @Test func badMembersNameTheirPath() {
        #expect(error(#"{"encryption": "strict"}"#)?.context["json.path"] == "database.encryption")
        #expect(error(#"{"instance": "SQLEXPRESS"}"#, port: 1433)?.context["json.path"] == "database.instance")
        #expect(error(#"{"instance": "host\\SQLEXPRESS"}"#)?.context["json.path"] == "database.instance")
        #expect(
            error(#"{"caFile": "/ca.pem", "trustServerCertificate": true}"#)?.context["json.path"] == "database.caFile")
        #expect(error(#"{"pollIntervalMs": 0}"#)?.context["json.path"] == "database.pollIntervalMs")
        #expect(error(#"{"slotName": "x"}"#)?.context["json.path"] == "database.slotName", "unknown members too")
    }
}

/// The factory: a configuration with `database.type` `sqlserver`, and `init`'s reading of a catalog.
@Suite struct SQLServerFactoryTests {
    func configuration(_ database: String) throws -> Configuration {
        try Configuration(
            json: try JSONValue(
                parsing:
                    #"{"schema": [{"name": "Bus", "primaryKey": "id", "properties": {"id": "int"}}], "realm": {"path": "/d"}, "database": "#
                    + database + "}"),
            connectors: .sqlServer)
    }

    @Test func aConfigurationReadsTheConnectorsMembersWithItsDefaults() throws {
        let c = try configuration(
            #"{"type": "sqlserver", "url": "sqlserver://sa@db:1444/app", "encryption": "require", "trackingName": "t1"}"#
        )
        let d = try #require(c.database)
        #expect(d.schema == "dbo" && d.sqlServer.encryption == .require && d.sqlServer.trackingName == "t1")
        let s = try SQLServerSettings(d)
        #expect(s.host == "db" && s.port == 1444 && s.user == "sa" && s.database == "app")
        #expect(s.displayTarget == "db:1444/app")
    }

    @Test func anInstanceWithAPortIsRefusedAtItsPath() {
        #expect {
            try configuration(#"{"type": "sqlserver", "host": "db", "port": 1433, "instance": "SQLEXPRESS"}"#)
        } throws: { e in
            (e as? RealmAdapterError)?.context["json.path"] == "database.instance"
        }
    }

    @Test func initReadsTablesKeysAndForeignKeysAndLeavesItsOwnOut() {
        let d = SQLServerIntrospection.describe(
            columns: [
                ["Bus", "id", "int", 0, 1, 0], ["Bus", "plate", "nvarchar", 1, 0, 0], ["Bus", "line", "int", 1, 0, 0],
                ["Bus", "shape", "geography", 1, 0, 0], ["Line", "id", "int", 0, 0, 0],
                ["realm_adapter_state", "path", "nvarchar", 0, 0, 0],
            ],
            keys: [["Bus", "PK_Bus", "PRIMARY KEY", "id"], ["Line", "PK_Line", "PRIMARY KEY", "id"]],
            foreignKeys: [["Bus", "line", "Line", "id"]], schema: "dbo", databaseName: "app")
        #expect(d.tables.map(\.name) == ["Bus", "Line"])
        let bus = d.table("Bus")!
        #expect(bus.primaryKey == ["id"] && bus.column("id")?.isGenerated == true)
        #expect(bus.column("plate")?.type == .scalar(.string) && bus.column("plate")?.isText == true)
        #expect(bus.column("shape")?.type == nil, "an unsupported type is left for init to report")
        #expect(bus.foreignKeys == [.init(column: "line", table: "Line", referencedColumn: "id")])
        #expect(
            SQLServerConnectorFactory().startingSettings(for: d).map(\.key) == ["trackingName"])
    }
}

/// What a configuration could slip into FreeTDS's configuration file, refused at its JSON path
/// (a line break in `caFile` once turned `encryption: require` off and sent the login in clear).
@Suite struct SQLServerHostileSettingsTests {
    func error(_ database: String) -> RealmAdapterError? {
        do {
            _ = try Configuration(
                json: try JSONValue(
                    parsing: #"{"schema": [{"name": "A", "primaryKey": "id", "properties": {"id": "int"}}], "#
                        + #""realm": {"path": "/d"}, "database": "# + database + "}"),
                connectors: .sqlServer)
            return nil
        } catch { return error as? RealmAdapterError }
    }

    @Test(arguments: [
        (#""host": "db\n    encryption = off""#, "database.host"),
        (#""host": "db;x""#, "database.host"),
        (#""host": """#, "database.host"),
        (#""host": "db", "instance": "SQL\nEXPRESS""#, "database.instance"),
        (#""host": "db", "caFile": "/ca.pem\n    encryption = off", "encryption": "require""#, "database.caFile"),
        (#""url": "sqlserver://sa@db:99999/app""#, "database.url"),
        (#""url": "sqlserver://sa@db:1433/app", "instance": "SQLEXPRESS""#, "database.instance"),
    ])
    func aValueThatWouldRewriteTheFreeTDSFileIsRefused(members: String, path: String) {
        let e = error(#"{"type": "sqlserver", "# + members + "}")
        #expect(e?.code == .invalidConfiguration && e?.context["json.path"] == path, "\(String(describing: e))")
    }
}

/// The FreeTDS configuration file lives in a directory of this process's own.
@Suite struct FreeTDSConfigurationFileTests {
    @Test func itIsInAPrivateDirectory() throws {
        let dir = (FreeTDS.configurationFile as NSString).deletingLastPathComponent
        let attributes = try FileManager.default.attributesOfItem(atPath: dir)
        #expect((attributes[.posixPermissions] as? Int) == 0o700, "\(dir)")
        #expect(dir != NSTemporaryDirectory() && !dir.hasSuffix("/tmp"))
    }
}
