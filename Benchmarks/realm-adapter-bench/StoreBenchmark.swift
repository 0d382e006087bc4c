import ArgumentParser
import Foundation
import GRDBSQLite
import RealmAdapter

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-adapter-bench",
        abstract: "Benchmarks, each reported as a ratio against the physical limit measured in the same run.",
        subcommands: [
            StoreBenchmark.self, PostgresBenchmark.self, LoadBenchmark.self, PerUserBenchmark.self,
            EventsBenchmark.self, ServeBenchmark.self, PermissionsBenchmark.self, SummaryBenchmark.self,
            StudioBenchmark.self, PgbenchBenchmark.self,
        ],
        defaultSubcommand: StoreBenchmark.self
    )
}

/// The store benchmark of the core issue: apply rate and replay rate against bare SQLite.
struct StoreBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Store apply and Adapter replay rates, against bare SQLite inserts of the same rows.",
        discussion: """
            For each count, a fresh child process generates the same small objects (id, name, qty, \
            price, active) batch by batch and measures, on one machine in one run (best of three \
            alternating rounds for the first two, on fresh files):
              bare SQLite   INSERT of the rows into a plain table, one prepared statement, one transaction
              apply         RealmStore.apply of INSERT instructions, in transactions of --batch
              replay        Adapter.current/advance over the whole history
            Both stores use WAL with synchronous=FULL. Peak memory (max RSS) is shown per count: it \
            should stay flat as the count grows.
            """
    )

    @Option(help: "Object counts to run, comma-separated.") var counts = "250000,1000000"
    @Option(help: "Instructions per apply transaction.") var batch = 10_000
    @Option(help: "Scratch directory (removed afterwards).") var scratch =
        NSTemporaryDirectory() + "realm-adapter-bench"
    @Flag(
        inversion: .prefixedNo,
        help: "Store commits with synchronous=FULL, as the store does by default (--no-durable: NORMAL).")
    var durable = true
    @Flag(
        help: ArgumentHelp(
            "Put the store in a Postgres database of the test server (scripts/pg.sh start) and measure "
                + "against COPY of the same rows into a plain table there (try --counts 20000)."))
    var postgres = false
    @Flag(help: .hidden) var child = false
    @Flag(help: .hidden) var profileApply = false

    func run() throws {
        let list = counts.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if profileApply {  // for `perf record`: the store's apply path alone
            let dir = scratch + "/profile-\(UUID().uuidString.prefix(6))"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            print(try storeApply(list[0], store: RealmStore(directory: dir)))
            return
        }
        if child {
            try postgres ? measureOnPostgres(count: list[0]) : measure(count: list[0])
            return
        }
        print("realm-adapter store benchmark (batch \(batch))" + (postgres ? ", the store on Postgres" : ""))
        let floor = postgres ? "COPY rows/s" : "bare inserts/s"
        print(
            Self.columns([
                "objects", floor, "apply instr/s", "replay instr/s", "apply ratio", "replay", "max RSS",
            ]))
        fflush(nil)
        for n in list {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
                .resolvingSymlinksInPath()
            if !FileManager.default.isExecutableFile(atPath: p.executableURL!.path) {
                p.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            }
            p.arguments =
                ["store", "--child", "--counts", String(n), "--batch", String(batch), "--scratch", scratch]
                + (durable ? [] : ["--no-durable"]) + (postgres ? ["--postgres"] : [])
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw ExitCode(p.terminationStatus) }
        }
        if postgres {
            print("apply = the Postgres store's apply rate / COPY of the same rows on the same server (target ≥ 0.4)")
            return
        }
        print("apply = apply rate / bare SQLite rate (target ≥ 0.5); replay target ≥ 1,000,000 instructions/s")
    }

    static func columns(_ cells: [String]) -> String {
        let widths = [10, 15, 15, 15, 12, 10, 9]
        return zip(cells, widths).map { String(repeating: " ", count: max(0, $1 - $0.count)) + $0 }.joined(
            separator: " ")
    }

    func row(_ i: Int) -> (Int64, String, Int64, Double, Bool) {
        (Int64(i), "item-\(i)", Int64(i % 1000), Double(i % 10_000) / 100, i % 3 == 0)
    }

    /// The physical limit: bare SQLite, one prepared statement, one transaction.
    func bareInsert(_ n: Int, file: String) throws -> Duration {
        var db: OpaquePointer?
        guard sqlite3_open(file, &db) == SQLITE_OK else { throw ValidationError("cannot open bare SQLite") }
        defer { sqlite3_close(db) }
        sqlite3_exec(
            db,
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL, price REAL NOT NULL, active INTEGER NOT NULL)",
            nil, nil, nil)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        return try ContinuousClock().measure {
            var stmt: OpaquePointer?
            sqlite3_exec(db, "BEGIN", nil, nil, nil)
            sqlite3_prepare_v2(
                db, "INSERT INTO item (id, name, qty, price, active) VALUES (?, ?, ?, ?, ?)", -1, &stmt, nil)
            for i in 0..<n {
                let r = row(i)
                sqlite3_bind_int64(stmt, 1, r.0)
                sqlite3_bind_text(stmt, 2, r.1, -1, transient)
                sqlite3_bind_int64(stmt, 3, r.2)
                sqlite3_bind_double(stmt, 4, r.3)
                sqlite3_bind_int64(stmt, 5, r.4 ? 1 : 0)
                guard sqlite3_step(stmt) == SQLITE_DONE else { throw ValidationError("bare insert failed") }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
        }
    }

    /// Store apply of the same rows as INSERT instructions, in large transactions, generated
    /// batch by batch (never all in memory). Only `apply` itself is timed.
    func storeApply(_ n: Int, store: RealmStore) throws -> Duration {
        try store.apply(
            [
                .addType(
                    ObjectSchema(
                        name: "Item", primaryKey: "id",
                        properties: [
                            Property(name: "id", type: .scalar(.int)), Property(name: "name", type: .scalar(.string)),
                            Property(name: "qty", type: .scalar(.int)), Property(name: "price", type: .scalar(.double)),
                            Property(name: "active", type: .scalar(.bool)),
                        ]))
            ], to: "/bench", origin: "bench")
        var elapsed = Duration.zero
        var i = 0
        while i < n {
            let batch = (i..<min(n, i + self.batch)).map { k -> Instruction in
                let r = row(k)
                return .insert(
                    objectType: "Item", identity: .int(r.0),
                    values: [
                        "id": .int(r.0), "name": .string(r.1), "qty": .int(r.2), "price": .double(r.3),
                        "active": .bool(r.4),
                    ])
            }
            elapsed += try ContinuousClock().measure { try store.apply(batch, to: "/bench", origin: "bench") }
            i += self.batch
        }
        return elapsed
    }

    func measure(count n: Int) throws {
        let dir = scratch + "/\(n)-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        // The machine is shared and noisy: run the limit and the store alternately, three
        // rounds on fresh files, and keep the best time of each.
        var bareTime = Duration.seconds(1_000_000)
        var applyTime = Duration.seconds(1_000_000)
        var store: RealmStore!
        for round in 0..<3 {
            bareTime = min(bareTime, try bareInsert(n, file: dir + "/bare\(round).sqlite"))
            try? FileManager.default.removeItem(atPath: dir + "/bare\(round).sqlite")
            var o = RealmStore.Options()
            o.durable = durable
            let s = try RealmStore(directory: dir + "/store\(round)", options: o)
            applyTime = min(applyTime, try storeApply(n, store: s))
            store = s
        }
        let adapter = try Adapter(store: store, name: "bench", pathRegex: "^/bench$", compactionInterval: .max)

        // 3. Replay through the Adapter API.
        var replayed = 0
        let replayTime = try ContinuousClock().measure {
            while let tx = try adapter.current("/bench") {
                replayed += tx.instructions.count
                try adapter.advance("/bench")
            }
        }
        replayed -= 1  // the ADD_TYPE
        guard replayed == n, try store.count(of: "Item", in: "/bench") == n else {
            throw ValidationError("counts do not match")
        }

        func rate(_ d: Duration) -> Double {
            Double(n) / (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let bare = rate(bareTime)
        let apply = rate(applyTime)
        let replay = rate(replayTime)
        Finding.ratio("store", "apply ÷ bare SQLite, \(n) objects", apply / bare, atLeast: 0.5)
        Finding(
            benchmark: "store", measure: "replay, \(n) objects", value: replay, target: 1_000_000, atLeast: true,
            unit: "instr/s"
        ).record()
        print(
            Self.columns([
                String(n), String(format: "%.0f", bare), String(format: "%.0f", apply), String(format: "%.0f", replay),
                String(format: "%.2f", apply / bare), replay >= 1_000_000 ? "≥1M ok" : "below 1M",
                String(format: "%.0f MB", Double(usage.ru_maxrss) / 1024),
            ]))
        fflush(nil)
    }
}
