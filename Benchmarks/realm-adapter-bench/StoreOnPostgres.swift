import ArgumentParser
import Foundation
import Logging
import PostgresConnector
import PostgresStore
import RealmAdapter

/// `store --postgres`: the store benchmark with the store in a Postgres database (issue 43),
/// against the floor of that server: the same rows `COPY`'d into a plain table, one COPY in
/// one transaction, on a database of its own.
extension StoreBenchmark {
    /// A database of the test server (`scripts/pg.sh`) for one round, dropped by `drop`.
    struct Scratch {
        let settings: PostgresSettings
        let drop: () -> Void

        static func create(_ prefix: String) throws -> Scratch {
            let admin = try PostgresSettings.testServer()
            let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
            let connection = try PostgresConnection.connectSync(admin)
            try connection.sessionSync { try $0.execute("CREATE DATABASE \(name)") }
            var own = admin
            own.database = name
            return Scratch(settings: own) {
                _ = try? connection.sessionSync { try $0.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
                connection.close()
            }
        }
    }

    /// The floor: the rows `COPY`'d into a plain table of the same columns, in one transaction.
    func copyFloor(_ n: Int) throws -> Duration {
        let scratch = try Scratch.create("bench_copy")
        defer { scratch.drop() }
        let pg = try PostgresConnection.connectSync(scratch.settings)
        defer { pg.close() }
        return try pg.sessionSync { s in
            try s.execute(
                """
                CREATE TABLE item (id bigint PRIMARY KEY, name text NOT NULL, qty bigint NOT NULL,
                    price double precision NOT NULL, active boolean NOT NULL)
                """)
            return try ContinuousClock().measure {
                try s.execute("BEGIN")
                _ = try s.copyIn("COPY item FROM STDIN") { write in
                    for i in 0..<n {
                        let r = row(i)
                        try write("\(r.0)\t\(r.1)\t\(r.2)\t\(r.3)\t\(r.4 ? "t" : "f")\n")
                    }
                }
                try s.execute("COMMIT")
            }
        }
    }

    func measureOnPostgres(count n: Int) throws {
        var floorTime = Duration.seconds(1_000_000)
        var applyTime = Duration.seconds(1_000_000)
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        // Alternately, three rounds on fresh databases; the best time of each.
        for _ in 0..<3 {
            floorTime = min(floorTime, try copyFloor(n))
            let scratch = try Scratch.create("bench_store")
            defer { scratch.drop() }
            let backend = try PostgresBackend.open(scratch.settings, logger: logger)
            defer { backend.close() }
            let store = RealmStore(backend: backend, location: "bench", logger: logger)
            applyTime = min(applyTime, try storeApply(n, store: store))
            guard try store.count(of: "Item", in: "/bench") == n else { throw ValidationError("counts do not match") }
        }
        func rate(_ d: Duration) -> Double {
            Double(n) / (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
        }
        let (floor, apply) = (rate(floorTime), rate(applyTime))
        Finding.ratio("store", "Postgres store apply ÷ COPY, \(n) objects", apply / floor, atLeast: 0.4)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        print(
            Self.columns([
                String(n), String(format: "%.0f", floor), String(format: "%.0f", apply), "-",
                String(format: "%.3f", apply / floor), "-", String(format: "%.0f MB", Double(usage.ru_maxrss) / 1024),
            ]))
        fflush(nil)
    }
}
