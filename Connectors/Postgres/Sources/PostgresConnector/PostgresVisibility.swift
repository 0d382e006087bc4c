import Foundation

/// A transaction reaches the change stream a moment before other sessions see it: the server
/// writes its commit record to the WAL (which logical decoding reads) and only then makes it
/// visible to new snapshots, after waiting for synchronous standbys if there are any. A read
/// the connector makes for a streamed transaction (a link table's rows, columns the stream does
/// not carry, the rows an own write missed) waits until the streamed transactions are visible,
/// or it would read the rows as they were before them.
enum PostgresVisibility {
    /// The ids among `$1` (32-bit, as pgoutput gives them) that a new snapshot does not see: each
    /// is widened with the epoch of the snapshot's `xmax` (the nearest full id, either side).
    static let invisible = """
        SELECT x FROM txid_current_snapshot() AS s, unnest($1::bigint[]) AS x
        WHERE NOT txid_visible_in_snapshot(
            txid_snapshot_xmax(s) + ((x - txid_snapshot_xmax(s) % 4294967296 + 6442450944) % 4294967296) - 2147483648,
            s)
        """

    /// Waits until new snapshots see every transaction in `xids`: usually at once, or after a
    /// few milliseconds. Returns false if they still do not after `timeout`.
    static func wait(
        until xids: [UInt32], areVisibleIn s: PostgresSession, timeout: Duration = .seconds(30)
    ) throws -> Bool {
        var pending = xids
        let deadline = ContinuousClock.now + timeout
        while true {
            let list = "{" + pending.map(String.init).joined(separator: ",") + "}"
            pending = try s.query(invisible, [list]).rows.compactMap { $0[0].flatMap { UInt32($0) } }
            if pending.isEmpty { return true }
            if ContinuousClock.now > deadline { return false }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }
}
