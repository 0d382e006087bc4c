import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

/// A change tracker in memory, with SQL Server's rules: one net change per row since a version
/// (`I` if the row did not exist then, `D` if it does not now, else `U`), the context of the
/// row's last change, a minimum valid version that cleanup or a truncate moves up.
final class ScriptedChangeTracking: ChangeTrackingReader {
    struct Event {
        var version: Int64
        var table: String
        var key: DatabaseRow
        var row: DatabaseRow?
        var context: Data?
    }

    var version: Int64 = 0
    var events: [Event] = []
    var minimum: [String: Int64] = [:]
    var untracked: Set<String> = []
    /// Fails the next read, as a dropped connection would.
    var failNextRead = false
    private(set) var snapshots = 0

    /// Commits one transaction of row changes (nil row: a delete) with `context`.
    func commit(_ changes: [(String, DatabaseRow, DatabaseRow?)], context: Data? = nil) {
        version += 1
        for (table, key, row) in changes {
            events.append(Event(version: version, table: table, key: key, row: row, context: context))
        }
    }

    func inSnapshot<T>(_ body: () throws -> T) throws -> T {
        snapshots += 1
        return try body()
    }

    func currentVersion() throws -> Int64 {
        if failNextRead {
            failNextRead = false
            throw SQLServerError.closed()
        }
        return version
    }

    func minValidVersion(_ table: String) throws -> Int64? { untracked.contains(table) ? nil : minimum[table] ?? 0 }

    func changes(_ table: TrackedTable, since v: Int64) throws -> [TrackedChange] {
        var keys: [DatabaseRow] = []
        for e in events where e.table == table.name && e.version > v && !keys.contains(e.key) { keys.append(e.key) }
        return keys.map { key in
            let history = events.filter { $0.table == table.name && $0.key == key }
            let before = history.last { $0.version <= v }.map { $0.row != nil } ?? false
            let last = history.last!
            let operation: Character = !before ? (last.row == nil ? "D" : "I") : (last.row == nil ? "D" : "U")
            return TrackedChange(operation: operation, context: last.context, key: key, row: last.row)
        }
    }
}

@Suite struct ChangeTrackingPollerTests {
    static let own = SQLServerWrites.context(name: "a")
    static let bus = TrackedTable(name: "Bus", keyColumns: ["id"])
    static let state = TrackedTable(name: "realm_adapter_state", keyColumns: ["adapter", "path"])

    func poller(from last: Int64 = 0) -> ChangeTrackingPoller {
        ChangeTrackingPoller(tables: [Self.bus], stateTable: Self.state, context: Self.own, from: last)
    }

    func bus(_ id: Int64, _ seats: Int64?) -> (String, DatabaseRow, DatabaseRow?) {
        ("Bus", DatabaseRow(["id": .int(id)]), seats.map { DatabaseRow(["id": .int(id), "seats": .int($0)]) })
    }

    func marker(_ path: String, _ version: Int64, adapter: String = "a") -> (String, DatabaseRow, DatabaseRow?) {
        let key = DatabaseRow(["adapter": .string(adapter), "path": .string(path)])
        var row = key
        row["version"] = .int(version)
        return ("realm_adapter_state", key, row)
    }

    var tokens: () -> UInt64 {
        var n: UInt64 = 0
        return {
            n += 1
            return n
        }
    }

    @Test func aRoundWithoutChangesGivesNothingAndStaysPut() throws {
        let db = ScriptedChangeTracking()
        var p = poller()
        #expect(try p.poll(db, token: tokens).isEmpty && p.last == 0)
    }

    @Test func foreignChangesAreOneTransactionAtTheRoundsVersionNetPerRow() throws {
        let db = ScriptedChangeTracking()
        db.commit([bus(1, 40), bus(2, 50)])
        db.commit([bus(1, 41), bus(2, nil)])
        var p = poller()
        let txs = try p.poll(db, token: tokens)
        #expect(txs.count == 1 && !txs[0].isOwn && txs[0].position == "00000000000000000002.1")
        // Bus 2 came and went within the round: a delete of what the Realm never had, harmless.
        #expect(
            txs[0].changes == [
                .insert(table: "Bus", row: DatabaseRow(["id": 1, "seats": 41])),
                .delete(table: "Bus", key: DatabaseRow(["id": 2])),
            ])
        #expect(p.last == 2)
        db.commit([bus(1, 42)])
        #expect(
            try p.poll(db, token: tokens)[0].changes == [
                .update(table: "Bus", row: DatabaseRow(["id": 1, "seats": 42]), oldKey: nil)
            ])
    }

    @Test func ownRowsComeFirstWithTheirMarkersAndForeignOnesAfter() throws {
        let db = ScriptedChangeTracking()
        db.commit([bus(1, 40)], context: Self.own)
        db.commit([marker("/SQLDemo", 7)], context: Self.own)
        db.commit([marker("/other", 3, adapter: "b")], context: SQLServerWrites.context(name: "b"))
        db.commit([bus(2, 10)])
        var p = poller()
        let txs = try p.poll(db, token: tokens)
        #expect(txs.map(\.isOwn) == [true, false])
        #expect(
            txs[0].markers == [AppliedMarker(adapter: "a", path: "/SQLDemo", version: 7)],
            "another adapter's are not ours")
        #expect(txs[0].changes == [.insert(table: "Bus", row: DatabaseRow(["id": 1, "seats": 40]))])
        #expect(txs[1].changes == [.insert(table: "Bus", row: DatabaseRow(["id": 2, "seats": 10]))])
        #expect(txs[0].position < txs[1].position)
    }

    /// The state table names the Realm-side adapter (`run`'s), not the daemon's `trackingName`:
    /// the first live run found every marker dropped, and a database delete of an object the
    /// Realm had written was never applied.
    @Test func markersOfEveryRealmAdapterTheDaemonWroteAreItsOwn() throws {
        let db = ScriptedChangeTracking()
        db.commit([marker("/items", 4, adapter: "scenario")], context: Self.own)
        var p = poller()
        let txs = try p.poll(db, token: tokens)
        #expect(txs.first?.markers == [AppliedMarker(adapter: "scenario", path: "/items", version: 4)])
    }

    @Test func aForeignEditAfterAnOwnWriteIsForeignAndOneBeforeItIsOverwritten() throws {
        let db = ScriptedChangeTracking()
        db.commit([bus(1, 40), bus(2, 40)])
        var p = poller()
        _ = try p.poll(db, token: tokens)
        db.commit([bus(1, 41), bus(2, 41)], context: Self.own)
        db.commit([bus(1, 99)])  // after ours: the row's last change
        let txs = try p.poll(db, token: tokens)
        #expect(
            txs.first { $0.isOwn }?.changes == [
                .update(table: "Bus", row: DatabaseRow(["id": 2, "seats": 41]), oldKey: nil)
            ])
        #expect(
            txs.first { !$0.isOwn }?.changes == [
                .update(table: "Bus", row: DatabaseRow(["id": 1, "seats": 99]), oldKey: nil)
            ])
    }

    @Test func aLostWindowStopsEveryRoundAndNeverSkipsAhead() throws {
        let db = ScriptedChangeTracking()
        db.commit([bus(1, 40)])
        db.commit([bus(1, 41)])
        db.minimum["Bus"] = 2  // cleanup, or a truncate, passed version 1
        var p = poller(from: 1)
        for _ in 0..<2 {
            #expect {
                try p.poll(db, token: tokens)
            } throws: { e in
                (e as? SQLServerError)?.message.contains("realm-adapter load") == true
            }
            #expect(p.last == 1)
        }
    }

    @Test func aTableWithoutChangeTrackingIsNamed() throws {
        let db = ScriptedChangeTracking()
        db.commit([bus(1, 40)])
        db.untracked = ["Bus"]
        var p = poller()
        #expect {
            try p.poll(db, token: tokens)
        } throws: { e in
            (e as? SQLServerError)?.message == SQLServerError.changeTrackingOff("Bus").message
        }
    }

    @Test func aFailedReadLeavesTheVersionAndTheNextRoundReadsTheSameWindow() throws {
        let db = ScriptedChangeTracking()
        db.commit([bus(1, 40)])
        var p = poller()
        db.failNextRead = true
        #expect(throws: SQLServerError.self) { try p.poll(db, token: tokens) }
        #expect(p.last == 0)
        #expect(try p.poll(db, token: tokens)[0].changes.count == 1)
    }

    @Test func afterACrashTheConfirmedVersionReadsTheWindowAgainAtTheSamePositions() throws {
        let db = ScriptedChangeTracking()
        db.commit([bus(1, 40)])
        var first = poller(from: 0)
        let before = try first.poll(db, token: tokens)
        // The daemon died after the Realm commit and before confirming: it starts from 0 again.
        var again = poller(from: 0)
        let after = try again.poll(db, token: tokens)
        #expect(after.map(\.position) == before.map(\.position) && after.map(\.changes) == before.map(\.changes))
        #expect(ChangeTrackingPoller.version(of: after[0].position) == 1)
    }
}
