import Foundation

/// One figure a benchmark measured, with the target an issue set for it: what
/// `realm-adapter-bench summary` tabulates.
struct Finding: Codable, Equatable {
    var benchmark: String
    var measure: String
    var value: Double
    var target: Double
    /// Whether the target is a floor (`≥`) rather than a ceiling (`<`).
    var atLeast: Bool
    /// Empty for a ratio; otherwise "ms", "MB", "s", "instr/s".
    var unit: String = ""

    var met: Bool { atLeast ? value >= target : value < target }

    /// The environment variable naming the file a summary collects findings in.
    static let fileVariable = "REALM_ADAPTER_BENCH_FINDINGS"

    /// Appends `self` to the summary's file (a JSON line), when a summary runs the benchmark.
    func record() {
        guard let file = ProcessInfo.processInfo.environment[Self.fileVariable],
            var line = try? JSONEncoder().encode(self)
        else { return }
        line.append(0x0A)
        guard let handle = FileHandle(forWritingAtPath: file) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: line)
    }

    static func ratio(_ benchmark: String, _ measure: String, _ value: Double, atLeast target: Double) {
        Finding(benchmark: benchmark, measure: measure, value: value, target: target, atLeast: true).record()
    }

    static func figure(_ benchmark: String, _ measure: String, _ value: Double, under target: Double, _ unit: String) {
        Finding(benchmark: benchmark, measure: measure, value: value, target: target, atLeast: false, unit: unit)
            .record()
    }
}
