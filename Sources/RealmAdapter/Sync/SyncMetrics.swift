import Foundation
import Metrics

/// What a sync direction counts, through swift-metrics: the process chooses the backend
/// (`realm-adapter run --metrics-port` serves Prometheus's text format; without one nothing is
/// kept). No label is a Realm path: per-user Realms would make a series each.
///
/// | metric | kind | labels |
/// |---|---|---|
/// | `realm_adapter_transactions_total` | counter | `direction` |
/// | `realm_adapter_row_changes_total` | counter | `direction` |
/// | `realm_adapter_errors_total` | counter | `direction` |
/// | `realm_adapter_reconnects_total` | counter | `direction` |
/// | `realm_adapter_dead_letters_total` | counter | `direction` |
/// | `realm_adapter_seconds_behind_source` | gauge | (database → Realm only) |
///
/// `direction` is `database_to_realm` or `realm_to_database`. Made when a service is made, so
/// a backend bootstrapped first gets them.
public struct SyncMetrics: Sendable {
    public enum Direction: String, Sendable {
        case databaseToRealm = "database_to_realm"
        case realmToDatabase = "realm_to_database"
    }

    /// Transactions applied: database transactions into the Realms, or Realm transactions into the database.
    let transactions: Counter
    /// Row changes applied (database → Realm) or row writes sent (Realm → database).
    let rowChanges: Counter
    /// Errors that stopped or interrupted the direction (a reconnect counts here and in `reconnects`).
    let errors: Counter
    let reconnects: Counter
    /// Changes set aside (`ignoreSQLErrors`): rows no Realm could hold, or Realm transactions the database refused.
    let deadLetters: Counter
    /// Seconds between the database's commit of the last transaction applied and its application.
    let secondsBehind: Gauge

    public init(_ direction: Direction) {
        let d = [("direction", direction.rawValue)]
        transactions = Counter(label: "realm_adapter_transactions_total", dimensions: d)
        rowChanges = Counter(label: "realm_adapter_row_changes_total", dimensions: d)
        errors = Counter(label: "realm_adapter_errors_total", dimensions: d)
        reconnects = Counter(label: "realm_adapter_reconnects_total", dimensions: d)
        deadLetters = Counter(label: "realm_adapter_dead_letters_total", dimensions: d)
        secondsBehind = Gauge(label: "realm_adapter_seconds_behind_source")
    }

    /// Records a database transaction applied now that committed at `commitTime`.
    func applied(_ tx: DatabaseTransaction) {
        transactions.increment()
        rowChanges.increment(by: tx.changes.count)
        if let t = tx.commitTime { secondsBehind.record(max(0, Date().timeIntervalSince(t.date))) }
    }
}
