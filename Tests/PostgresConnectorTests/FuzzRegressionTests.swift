import Foundation
import FuzzTargets
import Testing

@testable import PostgresConnector

/// Every input kept in `Fuzz/corpus/<target>/` (seeds, and inputs that once crashed) goes
/// through its fuzz target again: each must end without a crash. Runs without a server.
@Suite struct FuzzRegressionTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fuzz/corpus").standardizedFileURL

    @Test(arguments: ["instructions", "configuration", "pgoutput", "copy-binary"])
    func keptInputsDoNotCrash(target: String) throws {
        let run = try #require(FuzzTargets.all[target])
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.appendingPathComponent(target).path)
        #expect(!files.isEmpty, "no inputs kept for \(target)")
        for file in files {
            let data = try Data(contentsOf: Self.corpus.appendingPathComponent(target).appendingPathComponent(file))
            data.withUnsafeBytes { run($0) }
        }
    }
}

extension FuzzRegressionTests {
    /// Found by the fuzzer: a truncate message claiming 4 billion relations made the decoder
    /// reserve room for all of them (out of memory) before finding the message short.
    @Test func aTruncateCountPastTheMessageIsMalformedBeforeAnyAllocation() throws {
        let bytes: [UInt8] = [UInt8(ascii: "T"), 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 1]
        #expect { try PgOutputMessage(bytes) } throws: { "\($0)".contains("more relations than the message holds") }
    }
}

extension FuzzRegressionTests {
    /// Found by the fuzzer: a binary COPY row with a negative field count (other than the
    /// trailer's -1) stopped the process ("Range requires lowerBound <= upperBound").
    @Test func aNegativeFieldCountIsAnErrorNotACrash() throws {
        let bytes: [UInt8] = [0xFF, 0x21, 0xFF]
        #expect(throws: PostgresError.self) {
            try bytes.withUnsafeBufferPointer { try PostgresCopyBinary.fields($0, first: false) { _, _ in } }
        }
    }
}
