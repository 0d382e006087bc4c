import ArgumentParser
import Foundation

/// Every benchmark with a target, run one after another, and one table of where each stands.
struct SummaryBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract:
            "Runs the store, load, Postgres, per-user and pgbench benchmarks and prints every ratio against its target.",
        discussion: """
            Needs Postgres (`eval "$(scripts/pg.sh start)"`) and the release build of realm-adapter \
            beside this one. Each benchmark runs as its own process with the sizes below, as its own \
            subcommand would (their output is shown as it comes); then one table lists every figure \
            that has a target, with the best and the worst of --runs runs and whether the worst \
            meets the target. About 10 minutes a run at the default sizes on 2 cores; --quick takes \
            about a fifth of the rows.
            """
    )

    @Option(help: "Runs of the whole suite; the table shows the best and the worst of them.") var runs = 1
    @Flag(help: "Smaller sizes (a fifth of the rows), for a quick look; the targets are set at the full sizes.")
    var quick = false

    /// The benchmarks and their arguments.
    var suite: [[String]] {
        quick
            ? [
                ["store", "--counts", "250000"],
                ["load", "--counts", "200000", "--rounds", "2"],
                ["postgres", "--rows", "50000", "--seconds", "3"],
                ["peruser", "--rows", "200000", "--realms", "1,100000", "--updates", "2000"],
                ["pgbench", "--seconds", "5", "--rounds", "1"],
            ]
            : [
                ["store", "--counts", "1000000"],
                ["load", "--counts", "1000000", "--rounds", "2"],
                ["postgres"],
                ["peruser", "--realms", "1,100000"],
                ["pgbench"],
            ]
    }

    func run() async throws {
        let file = NSTemporaryDirectory() + "realm-adapter-bench-findings-\(UUID().uuidString.prefix(8)).jsonl"
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        for round in 1...runs {
            for arguments in suite {
                print("\n== run \(round) of \(runs): realm-adapter-bench \(arguments.joined(separator: " "))")
                fflush(nil)
                let p = Process()
                p.executableURL = URL(fileURLWithPath: me)
                p.arguments = arguments
                var env = ProcessInfo.processInfo.environment
                env[Finding.fileVariable] = file
                p.environment = env
                try p.run()
                p.waitUntilExit()
                guard p.terminationStatus == 0 else {
                    throw ValidationError("realm-adapter-bench \(arguments[0]) failed (status \(p.terminationStatus))")
                }
            }
        }
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let findings = try text.split(separator: "\n").map {
            try JSONDecoder().decode(Finding.self, from: Data($0.utf8))
        }
        print("\n" + Self.table(findings, runs: runs))
    }

    /// One row per measure, in the order first measured: best, worst, target, and whether the
    /// worst meets it.
    static func table(_ findings: [Finding], runs: Int) -> String {
        var order: [String] = []
        var byKey: [String: [Finding]] = [:]
        for f in findings {
            let key = f.benchmark + "\u{0}" + f.measure
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(f)
        }
        let header = ["benchmark", "measure", runs > 1 ? "best" : "value", runs > 1 ? "worst" : "", "target", "met"]
        var rows: [[String]] = [header]
        var met = 0
        for key in order {
            let fs = byKey[key]!
            let sorted = fs.sorted { $0.atLeast ? $0.value > $1.value : $0.value < $1.value }
            let (best, worst) = (sorted.first!, sorted.last!)
            if worst.met { met += 1 }
            func show(_ f: Finding) -> String {
                let digits = f.unit.isEmpty ? 2 : (f.value >= 100 ? 0 : 1)
                return String(format: "%.\(digits)f", f.value) + (f.unit.isEmpty ? "" : " " + f.unit)
            }
            let target =
                (best.atLeast ? "≥ " : "< ") + String(format: best.unit.isEmpty ? "%.2f" : "%.0f", best.target)
                + (best.unit.isEmpty ? "" : " " + best.unit)
            rows.append([
                best.benchmark, best.measure, show(best), runs > 1 ? show(worst) : "", target, worst.met ? "yes" : "NO",
            ])
        }
        let widths = header.indices.map { c in rows.map { $0[c].count }.max()! }
        let lines = rows.map { r in
            zip(r, widths).enumerated().map { c, cell in
                let pad = String(repeating: " ", count: cell.1 - cell.0.count)
                return c < 2 ? cell.0 + pad : pad + cell.0
            }.joined(separator: "  ")
        }
        return (lines + ["\(met) of \(order.count) targets met" + (runs > 1 ? " in every run" : "")])
            .joined(separator: "\n")
    }
}
