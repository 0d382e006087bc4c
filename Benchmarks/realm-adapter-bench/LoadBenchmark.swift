import ArgumentParser
import Foundation
import GRDBSQLite
import PostgresConnector
import RealmAdapter
import TestSupport

/// The loader benchmark of the loader issue, against the limits measured in the same run.
struct LoadBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "realm-adapter load against COPY to /dev/null, bare SQLite inserts and a Python peer.",
        discussion: """
            Needs Postgres: run `eval "$(scripts/pg.sh start)"` first. For each shape and count it \
            creates tables in a database of its own:
              plain    one table of 8 mixed columns (bigint, bigint, text, double,
                       boolean, timestamptz, uuid, text with NULLs): the count is its rows
              linked   purchases (the count) with two foreign keys, to customers (a
                       tenth) and products (a hundredth), and each customer's ordered
                       list of 5 favourite products in a link table (oid, idx, target)
            then measures in one run (rates count the rows of every table):
              COPY          COPY (SELECT …) TO STDOUT of each table, rows discarded
                            (the read limit)
              bare SQLite   the same rows inserted into plain SQLite tables with one
                            prepared statement each in one transaction, from Swift,
                            then (linked) the indexes the store keeps for links: on
                            each foreign key and the link table's target (the write limit)
              peer          Benchmarks/peer/psycopg2_sqlite_loader.py (psycopg2 +
                            sqlite3; plain only)
              load          the real `realm-adapter load` command (release build next
                            to this one), start to exit, with its peak memory
            Each is run --rounds times, alternating, and keeps its best time. The machine is shared \
            and its speed drifts, so `÷ bare` is also given per round (the load against the bare \
            inserts measured just before it), as the lowest and highest of the rounds.
            Targets: load ≥ 1.5 × peer, ≥ 0.7 × bare SQLite (linked) and ≥ 0.9 (plain), peak memory \
            under 200 MB at every count.
            With --postgres the store is a second database of the same server (`realm.store` a \
            postgresql:// URL, fresh each round), and the write limit is that server's: the same \
            rows, read beforehand, `COPY`'d in one transaction into plain tables of the same \
            columns and primary keys (target ≥ 0.4); the peer is not run.
            """
    )

    @Option(help: "Row counts, comma-separated.") var counts = "1000000"
    @Option(help: "Shapes, comma-separated: plain, linked.") var shapes = "plain,linked"
    @Option(help: "loader.batchSize for the load.") var batch = 10_000
    @Option(help: "Rounds; each measure keeps its best time (the machine is shared and noisy).") var rounds = 2
    @Option(help: "Scratch directory (removed afterwards).") var scratch =
        NSTemporaryDirectory() + "realm-adapter-load-bench"
    @Flag(help: "Load into a store in a second database of the same server, against COPY into plain tables there.")
    var postgres = false

    func run() async throws {
        let admin = try PostgresSettings.testServer()
        let cli = ChildProcess.built("realm-adapter")
        guard FileManager.default.isExecutableFile(atPath: cli) else {
            throw ValidationError("Build the command first: swift build -c release --product realm-adapter")
        }
        let peer = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("peer/psycopg2_sqlite_loader.py").path
        let shapes = try shapes.split(separator: ",").map {
            guard let s = LoadShape(rawValue: $0.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown shape \($0): plain or linked")
            }
            return s
        }
        print("realm-adapter load benchmark (loader.batchSize \(batch))" + (postgres ? ", the store on Postgres" : ""))
        print(
            Self.columns([
                "shape", "rows", "COPY rows/s", postgres ? "COPY in r/s" : "bare rows/s", "peer rows/s", "load rows/s",
                "÷ peer", postgres ? "÷ COPY" : "÷ bare", "per round", "peak MB",
            ]))
        fflush(nil)
        for shape in shapes {
            for n in counts.split(separator: ",").compactMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                try await measure(shape, n, admin: admin, cli: cli, peer: peer)
            }
        }
        print(
            postgres
                ? "targets: ÷ COPY into plain tables on the store's server ≥ 0.4, peak memory < 200 MB"
                : "targets: ÷ peer ≥ 1.5, ÷ bare ≥ 0.9 (plain) and ≥ 0.7 (linked), peak memory < 200 MB")
    }

    func measure(_ shape: LoadShape, _ n: Int, admin: PostgresSettings, cli: String, peer: String) async throws {
        let db = try await ScratchDatabase.create("loadbench", admin: admin, scratch: scratch)
        defer { db.drop() }
        let (dbName, dir, settings) = (db.name, db.directory, db.settings)
        let pg = try await PostgresConnection.connect(settings)
        defer { pg.close() }
        try await pg.session { s in
            try s.execute(shape.ddl(n))
            try s.execute("VACUUM ANALYZE")
        }

        let floor = postgres ? try PostgresFloor(shape, from: pg) : nil
        let config = dir + "/adapter.json"
        var store = dir + "/store"
        func writeConfig() throws {
            try """
            {"realm": {"store": "\(store)", "path": "/items", "adapterName": "bench"},
             "database": {"type": "postgres", "host": "\(settings.host!)", "port": \(port(settings)),
                          "user": "\(settings.user!)", "database": "\(dbName)", "slotName": "\(dbName)"},
             \(shape.configuration), "loader": {"batchSize": \(batch)}}
            """.write(toFile: config, atomically: true, encoding: .utf8)
        }
        var copyTime = Duration.seconds(1e9)
        var bareTime = copyTime
        var peerTime = copyTime
        var loadTime = copyTime
        var peak = 0
        var roundRatios: [Double] = []
        for _ in 0..<rounds {
            // The read limit: COPY of the same columns, rows discarded.
            copyTime = min(
                copyTime,
                try ContinuousClock().measure {
                    try pg.sessionSync { s in
                        for table in shape.tables { try s.copyOut("COPY (SELECT * FROM \(table)) TO STDOUT") { _ in } }
                    }
                })
            if shape == .plain && !postgres {
                // The peer.
                try? FileManager.default.removeItem(atPath: dir + "/peer.sqlite")
                let p = try await ChildProcess.run(
                    "/usr/bin/python3",
                    [
                        peer, settings.host!, String(port(settings)), settings.user!, dbName, "item",
                        dir + "/peer.sqlite",
                    ])
                guard p.status == 0, let line = p.stdout.split(separator: "\n").last,
                    case .object(let members)? = try? JSONValue(parsing: String(line)),
                    let peerSeconds = members.first(where: { $0.key == "seconds" })?.value.numberValue
                else {
                    throw ValidationError(
                        "the Python peer failed (needs python3-psycopg2: scripts/install-deps.sh):\n\(p.stderr)")
                }
                peerTime = min(peerTime, .milliseconds(Int64(peerSeconds * 1000)))
            }
            // The write limit: the same rows into bare SQLite, or COPY'd on the store's server.
            let bare: Duration
            if let floor {
                bare = try floor.copy(into: pg)
            } else {
                try? FileManager.default.removeItem(atPath: dir + "/bare.sqlite")
                bare = try shape.bareInsert(n, file: dir + "/bare.sqlite")
            }
            bareTime = min(bareTime, bare)
            // The loader: the real command on a fresh store, start to exit.
            try? FileManager.default.removeItem(atPath: dir + "/store")
            let storeDatabase =
                postgres ? try await ScratchDatabase.create("loadstore", admin: admin, scratch: scratch) : nil
            defer { storeDatabase?.drop() }
            if let s = storeDatabase?.settings {
                store = "postgresql://\(s.user!)@\(s.host!):\(port(s))/\(s.database!)"
            }
            try writeConfig()
            let started = ContinuousClock.now
            let load = try ChildProcess(
                cli, ["load", "--config", config, "--log-level", "warning"], stdout: dir + "/load.out",
                stderr: dir + "/load.err")
            guard await load.wait() == 0 else {
                throw ValidationError(
                    "realm-adapter load failed:\n"
                        + ((try? String(contentsOfFile: dir + "/load.err", encoding: .utf8)) ?? ""))
            }
            let loaded = ContinuousClock.now - started
            loadTime = min(loadTime, loaded)
            roundRatios.append(Self.seconds(bare) / Self.seconds(loaded))
            peak = max(peak, load.peakMemory ?? 0)
        }

        func rate(_ d: Duration) -> Double { Double(shape.rows(n)) / Self.seconds(d) }
        let loadRate = rate(loadTime)
        let bareRate = rate(bareTime)
        let peerRate = rate(peerTime)
        let rows = "\(shape.rows(n)) rows"
        if postgres {
            Finding.ratio("load", "\(shape) on a Postgres store ÷ COPY, \(rows)", loadRate / bareRate, atLeast: 0.4)
        } else {
            Finding.ratio(
                "load", "\(shape) ÷ bare SQLite, \(rows)", loadRate / bareRate, atLeast: shape == .plain ? 0.9 : 0.7)
        }
        if shape == .plain && !postgres {
            Finding.ratio("load", "plain ÷ Python peer, \(rows)", loadRate / peerRate, atLeast: 1.5)
        }
        Finding.figure("load", "\(shape) peak memory, \(rows)", Double(peak >> 20), under: 200, "MB")
        print(
            Self.columns([
                shape.rawValue, String(shape.rows(n)), String(format: "%.0f", rate(copyTime)),
                String(format: "%.0f", bareRate), shape == .plain && !postgres ? String(format: "%.0f", peerRate) : "-",
                String(format: "%.0f", loadRate),
                shape == .plain && !postgres ? String(format: "%.2f", loadRate / peerRate) : "-",
                String(format: "%.2f", loadRate / bareRate),
                String(format: "%.2f-%.2f", roundRatios.min()!, roundRatios.max()!), String(peak >> 20),
            ]))
        fflush(nil)
    }

    func port(_ s: PostgresSettings) -> Int { s.port ?? 5432 }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func columns(_ cells: [String], widths: [Int] = [7, 10, 12, 12, 12, 12, 7, 7, 10, 8]) -> String {
        return zip(cells, widths).map { String(repeating: " ", count: max(0, $1 - $0.count)) + $0 }.joined(
            separator: " ")
    }
}
