import Foundation
import PostgresConnector
import RealmAdapter
import Testing
import TestSupport

extension PostgresIntegration {
/// One bad row never halts sync for good.
@Suite struct BadRowTests {
    static let schema = """
        [{"name": "Task", "primaryKey": "id", "properties": {"id": "int", "owner": "string", "tags": "string[]"}}]
        """

    /// Database → Realm: a row no Realm can hold (a NULL in a text[] for a string[] property, a
    /// routing column with '/') stops the daemon with an error naming table, column, key and
    /// reason; with ignoreSQLErrors it goes to realm_adapter_dead_row and sync goes on.
    @Test(.timeLimit(.minutes(1)))
    func aRowNoRealmCanHoldStopsWithItsReasonOrIsSetAside() async throws {
        try await TestServer.withFreshDatabase { settings in
            let (dir, config) = try DaemonProcess.workspace(settings, schema: Self.schema)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let routed = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: #""path": "/SQLDemo""#, with: #""path": "/{owner}/tasks""#)
            try routed.write(toFile: config, atomically: true, encoding: .utf8)
            let pg = try await PostgresConnection.connect(settings)
            defer { pg.close() }
            var daemon = try DaemonProcess(config: config, log: dir + "/daemon-1.log")
            try await daemon.waitUntilSyncing()
            _ = try await pg.sql(#"INSERT INTO "Task" VALUES (1, 'ann', '{a,NULL}')"#)
            #expect(daemon.process.wait() == 1)
            var log = try String(contentsOfFile: daemon.log, encoding: .utf8)
            #expect(log.contains("Table Task, column tags, row with key 1") && log.contains("NULL") && log.contains("ignoreSQLErrors"),
                    "\(log.suffix(1500))")

            daemon = try DaemonProcess(config: config, log: dir + "/daemon-2.log")
            _ = daemon.process.wait()
            log = try String(contentsOfFile: daemon.log, encoding: .utf8)
            #expect(log.contains("Table Task, column tags, row with key 1"), "the same row stops it again: \(log.suffix(1500))")

            let text = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: #""schema":"#, with: #""ignoreSQLErrors": true, "schema":"#)
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            daemon = try DaemonProcess(config: config, log: dir + "/daemon-3.log")
            try await daemon.waitUntilSyncing()
            _ = try await pg.sql(#"INSERT INTO "Task" VALUES (2, 'a/b', '{x}'); INSERT INTO "Task" VALUES (3, 'bo', '{y}')"#)
            let store = try RealmStore(directory: dir + "/store")
            try await eventually("task 3 in bo's Realm") { try store.contains("/bo/tasks") && store.object(of: "Task", identity: 3, in: "/bo/tasks") != nil }
            #expect(daemon.terminate() == 0, Comment(rawValue: crashReport(daemon.log)))
            let dead = try await pg.sql("SELECT table_name, error, row_data::text FROM realm_adapter_dead_row ORDER BY id")
            #expect(dead.count == 2, "\(dead)")
            #expect(dead.first?[0] == "Task" && dead.first?[1]?.contains("column tags") == true)
            #expect(dead.last?[1]?.contains("owner") == true && dead.last?[1]?.contains("'/'") == true, "\(dead)")
            #expect(try store.contains("/ann/tasks") == false)
        }
    }
}
}
