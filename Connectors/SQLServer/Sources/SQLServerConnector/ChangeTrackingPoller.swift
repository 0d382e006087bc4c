import Foundation
import RealmAdapter

/// What the poller reads from SQL Server, one round at a time; ``SQLServerChangeReader`` reads
/// it from a connection, tests script it.
protocol ChangeTrackingReader {
    /// Runs `body` in one transaction under SNAPSHOT isolation: every read sees the same
    /// committed state, so the tables agree with each other and with the version.
    func inSnapshot<T>(_ body: () throws -> T) throws -> T
    /// `CHANGE_TRACKING_CURRENT_VERSION()`.
    func currentVersion() throws -> Int64
    /// `CHANGE_TRACKING_MIN_VALID_VERSION` of a table; nil when change tracking is off for it.
    func minValidVersion(_ table: String) throws -> Int64?
    /// The net change of each row of `table` changed after `version`, with its row as it is
    /// now (nil when it no longer exists).
    func changes(_ table: TrackedTable, since version: Int64) throws -> [TrackedChange]
    /// The error for a table ``minValidVersion(_:)`` answered nil for.
    func captureOff(_ table: String) -> SQLServerError
}

extension ChangeTrackingReader {
    func captureOff(_ table: String) -> SQLServerError { SQLServerError.changeTrackingOff(table) }
}

/// A table the poller follows: its name and key columns.
struct TrackedTable: Hashable, Sendable {
    var name: String
    var keyColumns: [String]
}

/// One row's net change in a round.
struct TrackedChange: Hashable, Sendable {
    /// `SYS_CHANGE_OPERATION`: `I`, `U` or `D`.
    var operation: Character
    /// `SYS_CHANGE_CONTEXT` of the row's last change (the writer's tag, if it set one).
    var context: Data?
    /// The key columns' values (from the change table: a deleted row has only these).
    var key: DatabaseRow
    /// The row as it is now, joined by key; nil when it no longer exists.
    var row: DatabaseRow?
}

/// SQL Server → Realm: change tracking read in rounds, each turned into the transactions the
/// core applies.
///
/// Change tracking reports one net change per row since a version, with the context of the
/// row's last change. A round therefore gives up to two transactions, at the round's version:
/// first the rows whose last change is this adapter's own (``DatabaseTransaction/isOwn``, with
/// the state table's markers: the Realm versions the database holds), then the others. A
/// foreign change that came after an own one on a row is the row's last, so it is foreign; one
/// that came before is overwritten in the database too, and the own row's values (compared
/// with the Realm's by the core) are what the database holds.
///
/// A round reads from ``last``, the version the core confirmed last (``confirm(_:)``), which
/// the connector keeps in the database. After a crash the same window is read again; the
/// Realms that already hold it skip it by position.
struct ChangeTrackingPoller {
    let tables: [TrackedTable]
    /// The connector's state table (adapter, path, version): its rows in own transactions are
    /// the markers.
    let stateTable: TrackedTable
    /// The tag of this adapter's writes (``SQLServerWrites/context(name:)``).
    let context: Data
    /// Changes after this version are read next.
    private(set) var last: Int64

    init(tables: [TrackedTable], stateTable: TrackedTable, context: Data, from last: Int64) {
        self.tables = tables
        self.stateTable = stateTable
        self.context = context
        self.last = last
    }

    /// The position of a round's transactions: the version, zero-padded so that positions sort
    /// as strings, then `.0` for the own transaction and `.1` for the other.
    static func position(_ version: Int64, own: Bool) -> String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + (own ? ".0" : ".1")
    }

    /// The version a position was read at.
    static func version(of position: String) -> Int64? { Int64(position.prefix { $0 != "." }) }

    /// Reads one round: nothing when no change was committed since ``last``.
    ///
    /// - Throws: ``SQLServerError`` when change tracking is off for a table, or when it no
    ///   longer holds changes after ``last`` (the retention period passed, or the table was
    ///   truncated): the Realms cannot be completed from it, and a load must start over.
    mutating func poll(_ reader: some ChangeTrackingReader, token: () -> UInt64) throws -> [DatabaseTransaction] {
        let (tables, stateTable, context, last) = (tables, stateTable, context, last)
        let round = try reader.inSnapshot { () throws -> (Int64, [DatabaseTransaction])? in
            let current = try reader.currentVersion()
            guard current > last else { return nil }
            for t in tables + [stateTable] {
                guard let minimum = try reader.minValidVersion(t.name) else {
                    throw reader.captureOff(t.name)
                }
                guard minimum <= last else { throw SQLServerError.windowLost(t.name, last: last, minimum: minimum) }
            }
            var own: [RowChange] = []
            var foreign: [RowChange] = []
            for t in tables {
                for c in try reader.changes(t, since: last) {
                    let change: RowChange =
                        if let row = c.row {
                            c.operation == "I"
                                ? .insert(table: t.name, row: row) : .update(table: t.name, row: row, oldKey: nil)
                        } else {
                            .delete(table: t.name, key: c.key)
                        }
                    if c.context == context { own.append(change) } else { foreign.append(change) }
                }
            }
            // Every Realm adapter's markers written by this daemon (the tag says whose).
            let markers = try reader.changes(stateTable, since: last).compactMap { c -> AppliedMarker? in
                guard c.context == context, let row = c.row, case .string(let adapter)? = row["adapter"],
                    case .string(let path)? = row["path"], case .int(let version)? = row["version"]
                else { return nil }
                return AppliedMarker(adapter: adapter, path: path, version: version)
            }
            var out: [DatabaseTransaction] = []
            if !own.isEmpty || !markers.isEmpty {
                out.append(
                    DatabaseTransaction(
                        position: Self.position(current, own: true), isOwn: true, changes: own, token: token(),
                        markers: markers))
            }
            if !foreign.isEmpty {
                out.append(
                    DatabaseTransaction(
                        position: Self.position(current, own: false), isOwn: false, changes: foreign, token: token()))
            }
            return (current, out)
        }
        guard let (current, transactions) = round else { return [] }
        self.last = current
        return transactions
    }
}

extension SQLServerError {
    /// A followed table has no capture trigger (`changeCapture` `triggers`).
    static func triggerMissing(_ table: String) -> SQLServerError {
        SQLServerError(
            .queryFailed,
            "Table \(table) has no enabled capture trigger (realm_adapter_capture_…), so its changes cannot be "
                + "followed: it is new, or its trigger was dropped or disabled. Run `realm-adapter load` (all tables): "
                + "it installs the trigger and reads the table again, as changes made without it are not in the Realms."
        )
    }

    /// Change tracking is off for a followed table.
    static func changeTrackingOff(_ table: String) -> SQLServerError {
        SQLServerError(
            .queryFailed,
            "Change tracking is off for table \(table), so its changes cannot be followed. Turn it on "
                + "(ALTER TABLE … ENABLE CHANGE_TRACKING), then run `realm-adapter load` again: changes made "
                + "while it was off are not in the Realms.")
    }

    /// Change tracking no longer holds the changes after the last version read.
    static func windowLost(_ table: String, last: Int64, minimum: Int64) -> SQLServerError {
        SQLServerError(
            .queryFailed,
            "Change tracking no longer holds the changes of table \(table) after version \(last) (it keeps "
                + "them from \(minimum)): the retention period passed while the daemon was stopped, or the "
                + "table was truncated. Run `realm-adapter load` again to start from a fresh snapshot; a longer "
                + "CHANGE_RETENTION avoids it.")
    }
}
