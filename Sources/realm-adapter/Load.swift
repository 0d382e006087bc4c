import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer

struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seed the Realms from the database: a one-time bulk import that hands off to `run` exactly.",
        discussion: """
            Reads every mapped table from one consistent snapshot and writes the rows to the \
            configured Realm(s) with the same mapping as the daemon (renames, converters, links, \
            link tables, join tables, per-user paths). Targets of links load first; links that \
            form cycles are set in a second pass. Rows stream: memory stays flat however large \
            the tables are. Each Realm transaction holds loader.batchSize rows.

            Hand-off: the snapshot is read where the change stream starts (Postgres: the \
            replication slot is (re)created at it; SQL Server: the change-tracking version or the \
            trigger log's number read in it), so when `realm-adapter run` starts afterwards, every \
            change committed during or after the load arrives exactly once. Stop the daemon before loading. A load refuses to start while a Realm \
            has changes the database does not have yet.

            Re-runs are safe: loading again (or after an interrupted load) merges rows into what \
            is there, writes only what changed, and removes objects the database no longer has. \
            The daemon refuses to start after an interrupted load until it is run again.

            A foreign key whose target row is missing stops the load with the table, column and \
            key, or with loader.danglingForeignKeys "nullify" loads a null link and counts it.

            Examples:
              realm-adapter load --config adapter.json
              realm-adapter load --config adapter.json --dry-run
              realm-adapter load --config adapter.json --tables bus,driver
            """
    )

    @OptionGroup var options: ConfigOptions

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Load only these tables (or types); comma-separated or repeated. The slot keeps its place if it exists.",
            valueName: "names"))
    var tables: [String] = []

    @Flag(name: .long, help: "Show what would be loaded (tables, estimated rows, target Realms) and write nothing.")
    var dryRun = false

    @OptionGroup var metrics: MetricsOptions

    func run() async throws {
        try await reportingErrors {
            let (c, logger) = try options.load()
            // realm_adapter_loader_rows_total{table}, while the load runs.
            let server = try metrics.endpoint(c).map { e in
                Task {
                    let probes = MetricsServer.Probes(store: nil, ready: { (true, "loading") })
                    try await MetricsServer.service(host: e.host, port: e.port, probes: probes, logger: logger).run()
                }
            }
            defer { server?.cancel() }
            let (database, mapping, connector) = try Wiring.connector(c, logger: logger)
            let only = tables.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
                .filter { !$0.isEmpty }
            let plan = try LoadPlan(mapping, only: only.isEmpty ? nil : only)
            if dryRun {
                try await dryRun(plan, mapping, connector, c)
                return
            }
            // Not synced per batch: the load's closing mark syncs everything before it.
            var storeOptions = RealmStore.Options()
            storeOptions.durable = false
            let store = try StoreLocation(c.realm).open(options: storeOptions, logger: logger)
            // Not beside a daemon of the adapter, even one reconnecting (its slot idle).
            let lock = try DaemonLock.forLoad(store: store, adapter: c.realm.adapterName)
            defer { withExtendedLifetime(lock) {} }
            let adapter = try Adapter(
                store: store, name: c.realm.adapterName, pathRegex: c.realm.effectivePathRegex, logger: logger)
            let loader = Loader(
                store: store, mapping: mapping, adapter: adapter, source: connector.sourceName, configuration: c.loader,
                logger: logger)
            logger.info(
                "Loading",
                metadata: [
                    "db.target": "\(database.displayTarget)", "realm.store": "\(c.realm.store)",
                    "realm.path": "\(c.realm.path)",
                ])
            let display = ProgressDisplay(logger: logger)
            let summary = try await loader.load(
                from: connector, plan: plan, partial: !only.isEmpty, progress: display.update)
            print(Self.report(summary, connector: connector))
        }
    }

    func dryRun(_ plan: LoadPlan, _ mapping: Mapping, _ connector: any DatabaseConnector, _ c: Configuration)
        async throws
    {
        let snapshot = try await connector.dryRunSnapshot(mapping)
        defer { try? snapshot.finish() }
        let rows = try await Task.detached { () -> [[String]] in
            try plan.steps.map { step in
                let estimate =
                    try snapshot.estimatedRows(step.table).map(Self.count)
                    ?? snapshot.sizeEstimate(step.table).map {
                        "~\(Self.count($0)) (planner, from its size: never analyzed)"
                    }
                    ?? "unknown (the database has no statistics for it yet)"
                var target = mapping.path.template
                if case .objects(let t, _) = step, !mapping.path.isLiteral {
                    target =
                        "\(Self.count(try snapshot.distinctCount(t.table, columns: mapping.path.fields))) "
                        + "Realms (\(mapping.path.template))"
                }
                return [step.table, step.what, estimate, target]
            }
        }.value
        print("Dry run: nothing is written. Store \(c.realm.store); batches of \(c.loader.batchSize) rows.")
        print(Status.table([["table", "loads", "estimated rows", "into"]] + rows))
    }

    static func report(_ s: LoadSummary, connector: any DatabaseConnector) -> String {
        let seconds = Double(s.duration.components.seconds) + Double(s.duration.components.attoseconds) / 1e18
        var lines = [
            "Loaded \(count(s.rows)) rows in \(String(format: "%.1f", seconds)) s "
                + "(\(count(Int(Double(s.rows) / max(seconds, 0.001)))) rows/s) into \(s.realms.count) "
                + "Realm\(s.realms.count == 1 ? "" : "s")."
        ]
        var rows = [["table", "loaded as", "rows", "deleted", "dangling links"]]
        for t in s.tables { rows.append([t.table, t.what, count(t.rows), count(t.deleted), count(t.danglingLinks)]) }
        lines.append(Status.table(rows))
        if let p = s.handOffPosition {
            lines.append("Hand-off at \(connector.describe(position: p)): `realm-adapter run` continues from there.")
        } else {
            lines.append(
                "The change stream kept its place: `realm-adapter run` replays changes since then over the "
                    + "loaded rows.")
        }
        if s.tables.contains(where: { $0.danglingLinks > 0 }) {
            lines.append(
                "warning: some links pointed to rows the database does not have and were loaded as null "
                    + "(loader.danglingForeignKeys)."
            )
        }
        return lines.joined(separator: "\n")
    }

    static func count(_ n: Int) -> String {
        let s = String(n)
        var out = ""
        for (i, ch) in s.reversed().enumerated() {
            if i > 0 && i % 3 == 0 && ch != "-" { out.append(",") }
            out.append(ch)
        }
        return String(out.reversed())
    }
}

/// Progress per load step: on a terminal, one line redrawn in place (rows of the estimate,
/// rows/s, time left); otherwise a log line every few seconds and one per finished step.
final class ProgressDisplay: @unchecked Sendable {
    // @unchecked: called from the loading thread only.
    let logger: Logger
    let isTerminal = isatty(STDERR_FILENO) == 1
    private var last = ContinuousClock.now - .seconds(60)

    init(logger: Logger) { self.logger = logger }

    func update(_ p: LoadProgress) {
        let now = ContinuousClock.now
        let interval: Duration = isTerminal ? .milliseconds(100) : .seconds(5)
        guard p.done || now - last >= interval else { return }
        last = now
        let of = p.estimatedRows.map { " of ~\(Load.count(max($0, p.rows)))" } ?? ""
        let eta = p.remaining.map { " · \(Int(Double($0.components.seconds) + 0.5)) s left" } ?? ""
        let line =
            "\(p.step.what) (\(p.step.table)): \(Load.count(p.rows))\(of) rows · \(Load.count(Int(p.rate))) "
            + "rows/s\(p.done ? " · done" : eta)"
        if isTerminal {
            FileHandle.standardError.write(Data("\r\u{1B}[K  \(line)\(p.done ? "\n" : "")".utf8))
        } else if p.done || p.rows > 0 {
            logger.info("\(line)")
        }
    }
}
