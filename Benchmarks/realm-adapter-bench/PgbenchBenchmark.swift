import ArgumentParser
import Foundation
import PostgresConnector
import RealmAdapter
import Synchronization
import TestSupport

/// A real client's load: pgbench's TPC-B on tables the daemon syncs, against the same load with
/// `pg_recvlogical` draining the same tables.
struct PgbenchBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pgbench",
        abstract: "pgbench's TPC-B with the daemon syncing its tables, against pg_recvlogical draining them.",
        discussion: """
            Needs Postgres (`eval "$(scripts/pg.sh start)"`), pgbench and pg_recvlogical (Postgres's \
            own packages), and the release build of realm-adapter beside this one. In a database of \
            its own it runs `pgbench -i -s --scale`, maps pgbench_accounts, pgbench_branches and \
            pgbench_tellers to the types Account, Branch and Teller of one Realm (pgbench_history has \
            no key and is not synced), plus a probe table. Then, --rounds times, alternating:
              floor    pg_recvlogical draining a slot of the same tables (pgoutput)
                       to /dev/null while `pgbench -T --seconds -c --clients` runs
              daemon   `realm-adapter load`, then `realm-adapter run` syncing while
                       the same pgbench runs
            In both, the benchmark inserts a probe row every 20 ms; with the daemon, each probe's lag \
            is its Realm commit time less its `clock_timestamp()` at insert. pgbench vacuums its \
            tables before each run; the rounds alternate which of the two goes first. At the end of each daemon \
            round, once a probe inserted after pgbench's end has arrived, the Realm is compared with \
            the database: every account's balance, and each other table's count and balance total; \
            any difference fails the run. Reported per round: pgbench's tps \
            with the daemon ÷ with pg_recvlogical, and the lag's p50 and p99.
            Targets: tps ratio ≥ 0.85 and lag p99 < 100 ms, in the worst round.
            """
    )

    @Option(help: "pgbench's scale (100,000 accounts each).") var scale = 1
    @Option(help: "Seconds of each pgbench run.") var seconds = 20
    @Option(help: "pgbench's clients (-c); two threads (-j 2).") var clients = 4
    @Option(help: "Rounds of floor and daemon, alternating.") var rounds = 2

    static let tables = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "bench_probe"]

    func run() async throws {
        let cli = ChildProcess.built("realm-adapter")
        guard FileManager.default.isExecutableFile(atPath: cli) else {
            throw ValidationError("Build the command first: swift build -c release --product realm-adapter")
        }
        let bin = ProcessInfo.processInfo.environment["REALM_ADAPTER_PG_BIN"] ?? "/usr/lib/postgresql/15/bin"
        let db = try await ScratchDatabase.create(
            "pgbench", admin: try PostgresSettings.testServer(),
            scratch: NSTemporaryDirectory() + "realm-adapter-pgbench-bench")
        defer { db.drop() }
        let client = PgbenchClient(bin: bin, settings: db.settings, clients: clients, seconds: seconds)
        try await client.initialize(scale: scale)
        let pg = try await PostgresConnection.connect(db.settings)
        defer { pg.close() }
        try await pg.session { s in
            try s.execute(
                """
                CREATE TABLE bench_probe (id integer PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp());
                CREATE PUBLICATION \(db.name)_recv FOR TABLE \(Self.tables.joined(separator: ", "));
                """)
        }
        print("realm-adapter pgbench benchmark: scale \(scale), \(clients) clients, \(seconds) s a run")
        var ratios: [Double] = []
        var p99s: [Double] = []
        var probe = Probe(settings: db.settings)
        for round in 1...rounds {
            // Alternating which goes first: the second runs on tables the first has just updated.
            var floor = 0.0
            if round % 2 == 1 { floor = try await floorRun(client, db, bin: bin, probe: &probe) }
            let daemon = try await daemonRun(client, db, cli: cli, round: round, probe: &probe)
            if round % 2 == 0 { floor = try await floorRun(client, db, bin: bin, probe: &probe) }
            ratios.append(daemon.tps / floor)
            p99s.append(daemon.lag.percentile(0.99) * 1000)
            print(
                String(
                    format: "  round %d: tps with pg_recvlogical %.0f, with the daemon %.0f, ratio %.2f; "
                        + "lag p50 %.1f ms, p99 %.1f ms (%d probes); nothing lost",
                    round, floor, daemon.tps, daemon.tps / floor, daemon.lag.percentile(0.5) * 1000, p99s.last!,
                    daemon.lag.count))
            fflush(nil)
        }
        Finding.ratio("pgbench", "TPC-B tps with the daemon ÷ with pg_recvlogical", ratios.min()!, atLeast: 0.85)
        Finding.figure("pgbench", "daemon lag p99 under TPC-B", p99s.max()!, under: 100, "ms")
        print(String(format: "  worst round: ratio %.2f, lag p99 %.1f ms", ratios.min()!, p99s.max()!))
    }

    /// pgbench's tps while pg_recvlogical drains a slot of the synced tables.
    func floorRun(_ client: PgbenchClient, _ db: ScratchDatabase, bin: String, probe: inout Probe) async throws
        -> Double
    {
        let slot = db.name + "_recv"
        let repl = try await PostgresConnection.connect(db.settings, replication: true)
        _ = try repl.sessionSync { try PostgresReplicationSetup.createSlot($0, slot) }
        repl.close()
        let s = db.settings
        let recv = try ChildProcess(
            bin + "/pg_recvlogical",
            [
                "-h", s.host!, "-p", String(s.port ?? 5432), "-U", s.user!, "-d", db.name, "--slot", slot, "--start",
                "--no-loop", "-o", "proto_version=1", "-o", "publication_names=\(slot)", "-f", "/dev/null",
            ], stderr: db.directory + "/pg_recvlogical.log")
        defer { if recv.isRunning { recv.signal(SIGKILL) } }
        let tps = try await probe.during { try await client.run() }
        // Still streaming at the end (with --no-loop it exits if its connection breaks).
        guard recv.isRunning else {
            throw ValidationError("pg_recvlogical stopped during the run: see \(db.directory)/pg_recvlogical.log")
        }
        recv.signal(SIGINT)
        _ = await recv.wait()
        let pg = try await PostgresConnection.connect(db.settings)
        defer { pg.close() }
        _ = try await pg.session { s in try s.query("SELECT pg_drop_replication_slot($1)", [slot]) }
        return tps.result
    }

    /// pgbench's tps and the probes' lags while `realm-adapter run` syncs the tables into a store
    /// `realm-adapter load` seeded; throws if the Realm and the database differ at the end.
    func daemonRun(_ client: PgbenchClient, _ db: ScratchDatabase, cli: String, round: Int, probe: inout Probe)
        async throws -> (tps: Double, lag: [Double])
    {
        let dir = db.directory + "/round-\(round)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let config = dir + "/adapter.json"
        try configuration(db, store: dir + "/store").write(toFile: config, atomically: true, encoding: .utf8)
        let load = try await ChildProcess.run(cli, ["load", "--config", config])
        guard load.status == 0 else { throw ValidationError("realm-adapter load failed:\n\(load.stderr)") }
        let store = try RealmStore(directory: dir + "/store")
        // Keeps the probes' transactions in the history, for their commit times.
        _ = try Adapter(store: store, name: "bench-history", pathRegex: "^/pgbench$")
        let daemon = try ChildProcess(
            cli, ["run", "--config", config], stdout: dir + "/run.log", stderr: dir + "/run.log")
        let first = probe.next
        try await probe.insert()
        try await probe.arrived(first, in: store, daemon: daemon, log: dir + "/run.log")
        defer { if daemon.isRunning { daemon.signal(SIGKILL) } }
        let run = try await probe.during { try await client.run() }
        // A probe after pgbench's last commit: once it is in the Realm, so is everything before it.
        let last = probe.next
        try await probe.insert()
        try await probe.arrived(last, in: store, daemon: daemon, log: dir + "/run.log")
        daemon.signal(SIGTERM)
        guard await daemon.wait() == 0 else { throw ValidationError("realm-adapter run failed: see \(dir)/run.log") }
        try await Self.compare(store, db.settings)
        var lag: [Double] = []
        for tx in try store.history(of: "/pgbench") {
            let realm = Double(tx.committedAt.seconds) + Double(tx.committedAt.nanoseconds) / 1e9
            for case .insert("Probe", .int(let id), let values) in tx.instructions where run.ids.contains(id) {
                if case .date(let at)? = values["at"] {
                    lag.append(realm - (Double(at.seconds) + Double(at.nanoseconds) / 1e9))
                }
            }
        }
        guard lag.count == run.ids.count else {
            throw ValidationError("\(lag.count) of \(run.ids.count) probes found in the Realm's history")
        }
        return (run.result, lag)
    }

    func configuration(_ db: ScratchDatabase, store: String) -> String {
        let s = db.settings
        return """
            {"realm": {"store": "\(store)", "path": "/pgbench", "adapterName": "bench"},
             "database": {"type": "postgres", "host": "\(s.host!)", "port": \(s.port ?? 5432), "user": "\(s.user!)",
                          "database": "\(db.name)", "slotName": "\(db.name)"},
             "schema": [
               {"name": "Account", "primaryKey": "aid",
                "properties": {"aid": "int", "bid": "int?", "abalance": "int?"}},
               {"name": "Branch", "primaryKey": "bid", "properties": {"bid": "int", "bbalance": "int?"}},
               {"name": "Teller", "primaryKey": "tid", "properties": {"tid": "int", "bid": "int?", "tbalance": "int?"}},
               {"name": "Probe", "primaryKey": "id", "properties": {"id": "int", "at": "date"}}],
             "mapping": {"tables": {"pgbench_accounts": "Account", "pgbench_branches": "Branch",
                                    "pgbench_tellers": "Teller", "bench_probe": "Probe"}}}
            """
    }

    /// The Realm holds what the database holds: every account's balance, row by row, and each
    /// other table's count and balance total. (Each change carries its row's new values, so this
    /// finds a change lost, not one applied twice.)
    static func compare(_ store: RealmStore, _ settings: PostgresSettings) async throws {
        let pg = try await PostgresConnection.connect(settings)
        defer { pg.close() }
        let rows = try await pg.session { s in try s.query("SELECT aid, abalance FROM pgbench_accounts").rows }
        var database: [Int64: Int64] = [:]
        for r in rows { if let aid = r[0].flatMap(Int64.init), let b = r[1].flatMap(Int64.init) { database[aid] = b } }
        var realm: [Int64: Int64] = [:]
        for o in try store.objects(of: "Account", in: "/pgbench") {
            if case .int(let aid) = o.identity, case .int(let b)? = o.values["abalance"] { realm[aid] = b }
        }
        guard realm == database else {
            let differ =
                database.filter { realm[$0.key] != $0.value }.count + realm.keys.filter { database[$0] == nil }.count
            throw ValidationError("\(differ) of \(database.count) accounts differ between the database and the Realm")
        }
        for (table, type, balance) in [
            ("pgbench_branches", "Branch", "bbalance"), ("pgbench_tellers", "Teller", "tbalance"),
            ("bench_probe", "Probe", "id"),
        ] {
            let row = try await pg.session { s in
                try s.query("SELECT count(*), coalesce(sum(\(balance)), 0) FROM \(table)").rows[0]
            }
            var (count, total) = (0, Int64(0))
            for o in try store.objects(of: type, in: "/pgbench") {
                count += 1
                if case .int(let v)? = o.values[balance] { total += v }
            }
            guard row == [String(count), String(total)] else {
                throw ValidationError(
                    "\(table) holds \(row.map { $0 ?? "NULL" }) (count, sum of \(balance)) and the Realm's \(type) "
                        + "objects [\(count), \(total)]")
            }
        }
    }
}

/// pgbench, as Postgres's packages ship it.
struct PgbenchClient: Sendable {
    let bin: String
    let settings: PostgresSettings
    let clients: Int
    let seconds: Int

    var connection: [String] {
        ["-h", settings.host!, "-p", String(settings.port ?? 5432), "-U", settings.user!]
    }

    func initialize(scale: Int) async throws {
        let r = try await ChildProcess.run(
            bin + "/pgbench",
            ["-i", "-q", "-s", String(scale)] + connection + [
                settings.database!
            ])
        guard r.status == 0 else { throw ValidationError("pgbench -i failed:\n\(r.stderr)") }
    }

    /// TPC-B for `seconds`: the transactions per second pgbench reports.
    func run() async throws -> Double {
        let r = try await ChildProcess.run(
            bin + "/pgbench",
            ["-T", String(seconds), "-c", String(clients), "-j", "2"] + connection + [settings.database!])
        guard r.status == 0, let tps = r.stdout.firstMatch(of: /tps = ([0-9.]+)/).flatMap({ Double($0.1) }) else {
            throw ValidationError("pgbench failed:\n\(r.stdout)\(r.stderr)")
        }
        return tps
    }
}

/// A probe row every 20 ms, through a connection of its own, while something runs.
struct Probe {
    let settings: PostgresSettings
    /// The next probe's id.
    private(set) var next: Int64 = 0

    init(settings: PostgresSettings) { self.settings = settings }

    /// Inserts one probe now.
    mutating func insert() async throws {
        let pg = try await PostgresConnection.connect(settings)
        defer { pg.close() }
        let id = next
        _ = try await pg.session { s in try s.query("INSERT INTO bench_probe (id) VALUES ($1)", [String(id)]) }
        next += 1
    }

    /// Runs `body` with probes going in meanwhile: its result and the probes' ids.
    mutating func during<T: Sendable>(_ body: @Sendable @escaping () async throws -> T) async throws
        -> (result: T, ids: ClosedRange<Int64>)
    {
        let pg = try await PostgresConnection.connect(settings)
        defer { pg.close() }
        let first = next
        let finished = Finished()
        let work = Task {
            defer { finished.flag.withLock { $0 = true } }
            return try await body()
        }
        var id = first
        repeat {
            let text = String(id)
            _ = try await pg.session { s in try s.query("INSERT INTO bench_probe (id) VALUES ($1)", [text]) }
            id += 1
            try await Task.sleep(for: .milliseconds(20))
        } while !finished.flag.withLock({ $0 })
        next = id
        return (try await work.value, first...(id - 1))
    }

    /// Waits until probe `id` is in the Realm (the daemon applies in commit order: all before it are).
    func arrived(_ id: Int64, in store: RealmStore, daemon: ChildProcess, log: String) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while try !store.contains("/pgbench") || store.object(of: "Probe", identity: .int(id), in: "/pgbench") == nil {
            guard daemon.isRunning, ContinuousClock.now < deadline else {
                throw ValidationError("probe \(id) did not reach the Realm: see \(log)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// Whether a task has ended, for a loop beside it.
private final class Finished: Sendable {
    let flag = Mutex(false)
}
