import Foundation
import Hummingbird
import Logging
import RealmAdapter

/// What the server knows of sync when it runs with the configuration's database (`serve` or
/// `run --serve` with a `database` section): Studio's Sync page reads `status`'s report through
/// it, and moves a blocked transaction to the dead letters as `dead-letter` does.
public struct SyncAccess: Sendable {
    let configuration: Configuration
    let connector: any DatabaseConnector
    let logger: Logger

    public init(configuration: Configuration, connector: any DatabaseConnector, logger: Logger) {
        self.configuration = configuration
        self.connector = connector
        self.logger = logger
    }
}

/// The Sync page (admins): what `realm-adapter status` says, live, worst lag first, with a button
/// that moves a blocked transaction to the dead letters.
extension Studio {
    /// `GET /studio/sync`
    func sync(_ session: StudioSession, notice: String? = nil, error: String? = nil) async throws -> Response {
        guard session.isAdmin else { throw ServerError.adminsOnly("see the Sync page") }
        guard let sync = server.sync else {
            let values: [String: Any] = ["noDatabase": true]
            return page("Sync", template: "sync", values, session: session, notice: notice, error: error, at: "sync")
        }
        let c = sync.configuration
        let report = try await SyncReport.make(c, store: server.store, connector: sync.connector, logger: sync.logger)
        let realms = report.realms.sorted { ($0.unsent, $1.path) > ($1.unsent, $0.path) }.map { r in
            [
                "path": r.path, "realmLink": Self.link("realm", ["path": r.path]), "version": r.version,
                "unsent": r.unsent, "recorded": r.recorded.map(String.init) ?? "-", "position": r.position ?? "-",
            ] as [String: Any]
        }
        let db = report.database
        let values: [String: Any] = [
            "noDatabase": false, "adapter": report.adapter, "engine": report.engine,
            "database": c.database?.displayTarget ?? "", "realmCount": report.realmCount, "behind": report.behind,
            "realms": realms, "partial": report.realms.count < report.realmCount, "stream": db.stream,
            "warnings": db.warnings + [report.unfinishedLoad].compactMap { $0 },
            "deadLetters": db.deadLetters, "deadRows": db.deadRows, "csrf": session.csrf,
            "olderSetAside": db.deadLetters > db.latestDeadLetters.count || db.deadRows > db.latestDeadRows.count,
            "listed": DatabaseStatus.listed, "hasDeadLetters": !db.latestDeadLetters.isEmpty,
            "hasDeadRows": !db.latestDeadRows.isEmpty,
            "deadLetterList": db.latestDeadLetters.map {
                [
                    "path": $0.path, "history": Self.link("history", ["path": $0.path]), "version": $0.version,
                    "failedAt": $0.failedAt, "error": $0.error, "content": $0.instructions,
                ] as [String: Any]
            },
            "deadRowList": db.latestDeadRows.map {
                [
                    "table": $0.table, "position": $0.position,
                    "failedAt": $0.failedAt, "error": $0.error, "content": $0.row,
                ]
            },
            "blocked": report.blocked.map { ["path": $0.path, "version": $0.version, "error": $0.error] },
            "blockedRow": report.blockedRow.map { ["position": $0.position, "error": $0.error] } ?? false,
            "webhooks": report.webhooks.map { w in
                [
                    "name": w.name, "pending": w.lag.pending, "realms": w.lag.realms,
                    "oldest": w.lag.oldest.map(Self.time) ?? "-", "deadLetterCount": w.lag.deadLetters.count,
                    "deadLetters": w.lag.deadLetters.prefix(10).map {
                        ["path": $0.path, "version": $0.version, "attempts": $0.attempts, "error": $0.error]
                    },
                ] as [String: Any]
            },
        ]
        return page(
            "Sync", template: "sync", values, session: session, notice: notice, error: error, live: Self.events(nil),
            at: "sync", refreshDelay: 2_000)
    }

    /// `POST /studio/dead-letter` (path, version, csrf): `realm-adapter dead-letter`'s action,
    /// with its checks (refused while a daemon streams, or if the version is no longer the blocked one).
    func deadLetter(_ session: StudioSession, _ form: [String: String]) async throws -> Response {
        guard session.isAdmin else { throw ServerError.adminsOnly("move a transaction to the dead letters") }
        guard let sync = server.sync else { return try await self.sync(session) }
        let path = try Self.required("path", form)
        guard let version = Int64(try Self.required("version", form)) else { throw StudioError.missing("version") }
        let c = sync.configuration
        do {
            let adapter = try Adapter(
                store: server.store, name: c.realm.adapterName, pathRegex: c.realm.effectivePathRegex,
                logger: sync.logger)
            let tx = try await adapter.moveBlockedToDeadLetters(path, version: version, connector: sync.connector)
            sync.logger.notice(
                "Studio moved a blocked transaction to the dead letters",
                metadata: ["realm.path": "\(path)", "version": "\(tx.version)", "user": "\(session.user?.id ?? "-")"])
            return try await self.sync(
                session,
                notice: "Moved version \(tx.version) of \(path) (\(tx.instructions.count) instructions) to "
                    + "realm_adapter_dead_letter: `realm-adapter run` goes on from the next one.")
        } catch let e as RealmAdapterError {
            return try await self.sync(session, error: e.message)
        }
    }
}
