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
        abstract: "realm-adapter load against COPY to /dev/null, bare SQLite inserts and a Python peer, on one table.",
        discussion: """
            Needs Postgres: run `eval "$(scripts/pg.sh start)"` first. For each count it creates a \
            table of 8 mixed columns (bigint, bigint, text, double, boolean, timestamptz, uuid, \
            text with NULLs) in a database of its own, then measures in one run:
              COPY          COPY (SELECT …) TO STDOUT of the table, rows discarded (the read limit)
              bare SQLite   the same rows inserted into a plain SQLite table with one prepared \
                            statement in one transaction, from Swift (the write limit)
              peer          Benchmarks/peer/psycopg2_sqlite_loader.py (psycopg2 + sqlite3)
              load          the real `realm-adapter load` command (release build next to this one), \
                            start to exit, with its peak memory
            Each is run --rounds times, alternating, and keeps its best time. The machine is shared \
            and its speed drifts, so `÷ bare` is also given per round (the load against the bare \
            inserts measured just before it), as the lowest and highest of the rounds.
            Targets: load ≥ 1.5 × peer, ≥ 0.7 × bare SQLite, peak memory under 200 MB at every count.
            """
    )

    @Option(help: "Row counts, comma-separated.") var counts = "1000000"
    @Option(help: "loader.batchSize for the load.") var batch = 10_000
    @Option(help: "Rounds; each measure keeps its best time (the machine is shared and noisy).") var rounds = 2
    @Option(help: "Scratch directory (removed afterwards).") var scratch =
        NSTemporaryDirectory() + "realm-adapter-load-bench"

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        guard let port = env["REALM_ADAPTER_PG_PORT"].flatMap(Int.init) else {
            throw ValidationError("Start Postgres first: eval \"$(scripts/pg.sh start)\"")
        }
        let admin = PostgresSettings(
            host: env["REALM_ADAPTER_PG_HOST"] ?? "127.0.0.1", port: port,
            user: env["REALM_ADAPTER_PG_USER"] ?? "postgres", database: "postgres")
        let cli = ChildProcess.built("realm-adapter")
        guard FileManager.default.isExecutableFile(atPath: cli) else {
            throw ValidationError("Build the command first: swift build -c release --product realm-adapter")
        }
        let peer = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("peer/psycopg2_sqlite_loader.py").path
        print("realm-adapter load benchmark (loader.batchSize \(batch))")
        print(
            Self.columns([
                "rows", "COPY rows/s", "bare rows/s", "peer rows/s", "load rows/s", "÷ peer", "÷ bare", "per round",
                "peak MB",
            ]))
        fflush(nil)
        for n in counts.split(separator: ",").compactMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            try await measure(n, admin: admin, cli: cli, peer: peer)
        }
        print("targets: ÷ peer ≥ 1.5, ÷ bare ≥ 0.7, peak memory < 200 MB")
    }

    func measure(_ n: Int, admin: PostgresSettings, cli: String, peer: String) async throws {
        let db = try await ScratchDatabase.create("loadbench", admin: admin, scratch: scratch)
        defer { db.drop() }
        let (dbName, dir, settings) = (db.name, db.directory, db.settings)
        let pg = try await PostgresConnection.connect(settings)
        defer { pg.close() }
        try await pg.session { s in
            try s.execute(
                """
                CREATE TABLE item (id bigint PRIMARY KEY, n bigint NOT NULL, label text NOT NULL, price double precision NOT NULL,
                                   active boolean NOT NULL, created timestamptz NOT NULL, code uuid NOT NULL, note text);
                INSERT INTO item SELECT i, i * 3, 'label ' || i, i * 1.5, i % 2 = 0, timestamptz '2026-01-01' - i * interval '1 second',
                                        md5(i::text)::uuid, CASE WHEN i % 5 = 0 THEN NULL ELSE 'note number ' || i END
                FROM generate_series(1, \(n)) i
                """)
            try s.execute("VACUUM ANALYZE item")
        }

        let config = dir + "/adapter.json"
        try """
        {"realm": {"store": "\(dir)/store", "path": "/items", "adapterName": "bench"},
         "database": {"type": "postgres", "host": "\(settings.host!)", "port": \(port(settings)), "user": "\(settings.user!)",
                      "database": "\(dbName)", "slotName": "\(dbName)"},
         "schema": [{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "label": "string", "price": "double",
                     "active": "bool", "created": "date", "code": "uuid", "note": "string?"}}],
         "mapping": {"tables": {"item": "Item"}}, "loader": {"batchSize": \(batch)}}
        """.write(toFile: config, atomically: true, encoding: .utf8)
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
                        try s.copyOut(
                            "COPY (SELECT id, n, label, price, active, created, code, note FROM item) TO STDOUT"
                        ) { _ in }
                    }
                })
            // The peer.
            try? FileManager.default.removeItem(atPath: dir + "/peer.sqlite")
            let p = try await ChildProcess.run(
                "/usr/bin/python3",
                [peer, settings.host!, String(port(settings)), settings.user!, dbName, "item", dir + "/peer.sqlite"])
            guard p.status == 0, let line = p.stdout.split(separator: "\n").last,
                case .object(let members)? = try? JSONValue(parsing: String(line)),
                case .double(let peerSeconds)? = members.first(where: { $0.key == "seconds" })?.value
            else {
                throw ValidationError(
                    "the Python peer failed (needs python3-psycopg2: scripts/install-deps.sh):\n\(p.stderr)")
            }
            peerTime = min(peerTime, .milliseconds(Int64(peerSeconds * 1000)))
            // The write limit: the same rows into bare SQLite.
            try? FileManager.default.removeItem(atPath: dir + "/bare.sqlite")
            let bare = try bareInsert(n, file: dir + "/bare.sqlite")
            bareTime = min(bareTime, bare)
            // The loader: the real command on a fresh store, start to exit.
            try? FileManager.default.removeItem(atPath: dir + "/store")
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

        func rate(_ d: Duration) -> Double { Double(n) / Self.seconds(d) }
        let loadRate = rate(loadTime)
        let bareRate = rate(bareTime)
        let peerRate = rate(peerTime)
        print(
            Self.columns([
                String(n), String(format: "%.0f", rate(copyTime)), String(format: "%.0f", bareRate),
                String(format: "%.0f", peerRate),
                String(format: "%.0f", loadRate), String(format: "%.2f", loadRate / peerRate),
                String(format: "%.2f", loadRate / bareRate),
                String(format: "%.2f-%.2f", roundRatios.min()!, roundRatios.max()!), String(peak >> 20),
            ]))
        fflush(nil)
    }

    func port(_ s: PostgresSettings) -> Int { s.port ?? 5432 }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func columns(_ cells: [String]) -> String {
        let widths = [10, 12, 12, 12, 12, 7, 7, 10, 8]
        return zip(cells, widths).map { String(repeating: " ", count: max(0, $1 - $0.count)) + $0 }.joined(
            separator: " ")
    }

    /// The same values as the table's generator, inserted with one prepared statement in one
    /// transaction (dates as nanoseconds and UUIDs as 16 bytes, as the store keeps them).
    func bareInsert(_ n: Int, file: String) throws -> Duration {
        var db: OpaquePointer?
        guard sqlite3_open(file, &db) == SQLITE_OK else { throw ValidationError("cannot open bare SQLite") }
        defer { sqlite3_close(db) }
        sqlite3_exec(
            db,
            """
            PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
            CREATE TABLE item (id INTEGER PRIMARY KEY, n INTEGER, label TEXT, price REAL, active INTEGER, created INTEGER, code BLOB, note TEXT)
            """, nil, nil, nil)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let base: Int64 = 1_767_225_600_000_000_000  // 2026-01-01 in nanoseconds
        return try ContinuousClock().measure {
            var stmt: OpaquePointer?
            sqlite3_exec(db, "BEGIN", nil, nil, nil)
            sqlite3_prepare_v2(db, "INSERT INTO item VALUES (?, ?, ?, ?, ?, ?, ?, ?)", -1, &stmt, nil)
            var uuid = [UInt8](repeating: 0, count: 16)
            // Text built in place (no String per row), so the limit measures SQLite, not formatting.
            var label = Array("label ".utf8) + [UInt8](repeating: 0, count: 20)
            var note = Array("note number ".utf8) + [UInt8](repeating: 0, count: 20)
            func text(_ buffer: inout [UInt8], prefix: Int, _ v: Int64, column: Int32) {
                var digits = 0
                var x = v
                repeat {
                    digits += 1
                    x /= 10
                } while x > 0
                x = v
                for k in stride(from: prefix + digits - 1, through: prefix, by: -1) {
                    buffer[k] = UInt8(48 + x % 10)
                    x /= 10
                }
                buffer.withUnsafeBufferPointer { p in
                    p.withMemoryRebound(to: CChar.self) {
                        _ = sqlite3_bind_text(stmt, column, $0.baseAddress, Int32(prefix + digits), transient)
                    }
                }
            }
            for k in 1...n {
                let i = Int64(k)
                sqlite3_bind_int64(stmt, 1, i)
                sqlite3_bind_int64(stmt, 2, i * 3)
                text(&label, prefix: 6, i, column: 3)
                sqlite3_bind_double(stmt, 4, Double(i) * 1.5)
                sqlite3_bind_int64(stmt, 5, i % 2 == 0 ? 1 : 0)
                sqlite3_bind_int64(stmt, 6, base - i * 1_000_000_000)
                withUnsafeBytes(of: i.bigEndian) {
                    for j in 0..<8 {
                        uuid[j] = $0[j]
                        uuid[j + 8] = $0[7 - j]
                    }
                }
                sqlite3_bind_blob(stmt, 7, uuid, 16, transient)
                if i % 5 == 0 { sqlite3_bind_null(stmt, 8) } else { text(&note, prefix: 12, i, column: 8) }
                guard sqlite3_step(stmt) == SQLITE_DONE else { throw ValidationError("bare insert failed") }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
        }
    }
}
