import Foundation
import RealmAdapter

/// Choosing and setting up change capture: change tracking or triggers.
extension SQLServerConnector {
    typealias ChangeCapture = SQLServerOptions.ChangeCapture

    /// `changeCapture` as configured, or, when absent, change tracking if the server has it
    /// (`CHANGE_TRACKING_CURRENT_VERSION()` answers, NULL where it is off) and triggers if not.
    static func capture(_ s: SQLServerSession, configured: ChangeCapture?) throws -> ChangeCapture {
        if let configured { return configured }
        do {
            try s.execute("SELECT CHANGE_TRACKING_CURRENT_VERSION();")
            return .tracking
        } catch let e as SQLServerError where Self.isMissingFunction(e) {
            return .triggers
        }
    }

    /// SQL Server's "not a recognized built-in function name" (195), Babelfish's "function … does not exist".
    static func isMissingFunction(_ e: SQLServerError) -> Bool {
        e.number == 195
            || e.serverMessages.contains { $0.text.contains("does not exist") && $0.text.contains("function") }
    }

    /// The capture in use, chosen on first use and logged once.
    func capture(_ s: SQLServerSession) throws -> ChangeCapture {
        if let known = state.withLock({ $0.capture }) { return known }
        let chosen = try Self.capture(s, configured: options.changeCapture)
        state.withLock { $0.capture = chosen }
        let why =
            options.changeCapture != nil
            ? "as configured (database.changeCapture)"
            : chosen == .triggers ? "this server has no change tracking" : "the default"
        logger.info(
            "Change capture: \(chosen == .tracking ? "change tracking" : "triggers and a change log") (\(why))",
            metadata: ["db.target": "\(settings.displayTarget)"])
        return chosen
    }

    /// The tag on each statement the daemon writes: none under triggers (the session carries it).
    var statementContext: Data? { state.withLock { $0.capture } == .triggers ? nil : context }

    /// Installs a capture trigger on each followed table, replacing one of an older definition
    /// in the same transaction (no write goes uncaptured in between). When `resuming`, a table
    /// that had none means changes went unrecorded: refused, the Realms need a load.
    static func installTriggers(
        _ s: SQLServerSession, _ tables: [TrackedTable], _ d: SQLServerDialect, resuming: Bool
    ) throws {
        var installed: [String: Set<String>] = [:]
        try s.query(SQLServerTriggers.installed(d)) { _, r in
            if case .string(let table) = r[0], case .string(let name) = r[1] {
                installed[SQLServerSchema.key(table), default: []].insert(name)
            }
        }
        for t in tables {
            guard t.keyColumns.count <= SQLServerTriggers.maxKeyParts else {
                throw SQLServerError.mismatch([
                    "table \(t.name) has \(t.keyColumns.count) key columns; trigger capture takes at most "
                        + "\(SQLServerTriggers.maxKeyParts)"
                ])
            }
            let name = SQLServerTriggers.triggerName(t, schema: d.schema)
            let present = installed[SQLServerSchema.key(t.name)] ?? []
            if present.contains(name) { continue }
            if resuming, present.isEmpty { throw SQLServerError.triggerMissing(t.name) }
            try s.execute("BEGIN TRANSACTION;")
            do {
                for old in present { try s.execute("DROP TRIGGER \(d.quote(d.schema)).\(d.quote(old));") }
                try s.execute(SQLServerTriggers.createTrigger(t, d))
                try s.execute("COMMIT TRANSACTION;")
            } catch {
                try? s.execute("IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;")
                throw error
            }
        }
    }

    /// Per table, each column's declared type (``SQLServerType/declared(_:length:precision:scale:seconds:)``).
    static func declaredTypes(_ s: SQLServerSession, schema: String) throws -> [String: [String: String]] {
        var out: [String: [String: String]] = [:]
        try s.query(SQLServerSQL.declaredTypes(schema)) { _, r in
            guard case .string(let table) = r[0], case .string(let column) = r[1], case .string(let type) = r[2]
            else { return }
            func int(_ v: Value) -> Int64? { if case .int(let n) = v { n } else { nil } }
            out[SQLServerSchema.key(table), default: [:]][SQLServerSchema.key(column)] = SQLServerType.declared(
                type, length: int(r[3]), precision: int(r[4]), scale: int(r[5]), seconds: int(r[6]))
        }
        return out
    }

    /// Deletes the log every adapter of the database has applied.
    func trimLog() async throws {
        let c = try await connection(\.writer)
        let d = dialect
        try await c.session { s in try s.execute(SQLServerTriggers.trim(d)) }
    }
}
