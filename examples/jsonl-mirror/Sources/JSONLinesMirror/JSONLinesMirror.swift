import Foundation
import Logging
import RealmAdapter
import ServiceLifecycle

/// An instruction-level connector: mirrors every followed Realm into a JSON-lines file, one
/// line per instruction, written only through the public Adapter API.
///
/// It shows the pattern every connector needs for exactly-once delivery on top of
/// at-least-once replay: each line carries the Realm version it came from, the file is flushed
/// to disk *before* `advance`, and on start the mirror reads the last version already in the
/// file and skips transactions up to it. Killing it at any point never loses or duplicates a line.
///
/// File layout: the Realm `/u1/tasks` goes to `<output>/u1/tasks.jsonl`; each line is
/// `{"version": 7, "instruction": {…the instruction's JSON…}}`.
public final class JSONLinesMirror: Service {
    public let adapter: Adapter
    public let outputDirectory: String
    private let logger: Logger

    public init(adapter: Adapter, outputDirectory: String, logger: Logger = Logger(label: "jsonl-mirror")) {
        self.adapter = adapter
        self.outputDirectory = outputDirectory
        self.logger = logger
    }

    /// Follows the store until the service group shuts down (SIGTERM/SIGINT), finishing the
    /// transaction in hand first.
    public func run() async throws {
        for await path in adapter.pathsWithChanges().cancelOnGracefulShutdown() {
            try drain(path)
        }
        logger.info("Stopped; every mirrored transaction was acknowledged")
    }

    /// Mirrors every pending transaction of every followed Realm, then returns.
    /// - Returns: the number of transactions written.
    @discardableResult
    public func drainAll() throws -> Int {
        try adapter.paths().reduce(0) { $0 + (try drain($1)) }
    }

    /// Mirrors the pending transactions of one Realm.
    @discardableResult
    public func drain(_ path: String) throws -> Int {
        let file = self.file(for: path)
        var written = 0
        var lastInFile: Int64?
        while let tx = try adapter.current(path) {
            if lastInFile == nil { lastInFile = try Self.lastVersion(in: file) }
            if tx.version > lastInFile! {
                let schema = try adapter.store.schema(of: path)
                var text = ""
                for instruction in tx.instructions {
                    text +=
                        JSONValue.object([
                            .init("version", .int(tx.version)), .init("instruction", instruction.json(schema: schema)),
                        ]).serialized() + "\n"
                }
                try append(text, to: file)
                lastInFile = tx.version
                written += 1
            }
            try adapter.advance(path)
        }
        if written > 0 {
            logger.info(
                "Mirrored transactions", metadata: ["realm.path": "\(path)", "count": "\(written)", "file": "\(file)"])
        }
        return written
    }

    /// `<output>/<path>.jsonl`; Realm paths are validated, so they cannot climb out of the directory.
    public func file(for path: String) -> String {
        outputDirectory + path + ".jsonl"
    }

    private func append(_ text: String, to file: String) throws {
        let directory = (file as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: file) {
            _ = FileManager.default.createFile(atPath: file, contents: nil)
        }
        let handle = try FileHandle(forWritingAtPath: file).orThrow("Cannot open \(file) for writing.")
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.synchronize()  // on disk before advance: a crash can repeat a transaction, never lose it
    }

    /// The version on the file's last complete line, or 0.
    static func lastVersion(in file: String) throws -> Int64 {
        guard let handle = FileHandle(forReadingAtPath: file) else { return 0 }
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        let tail = min(size, 1 << 20)
        try handle.seek(toOffset: size - tail)
        let data = try handle.readToEnd() ?? Data()
        // A crash mid-write can leave a partial last line: use the last line that ends in a newline.
        guard
            let lines = String(data: data, encoding: .utf8)?.split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast(),
            let last = lines.last(where: { !$0.isEmpty }),
            case .int(let v)? = (try? JSONValue(parsing: String(last)))?["version"]
        else { return 0 }
        return v
    }
}

extension Optional {
    func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw RealmAdapterError(.storeUnavailable, message) }
        return self
    }
}
