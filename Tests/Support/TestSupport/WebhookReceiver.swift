import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A webhook endpoint for the tests: Python's own HTTP server (Tests/Support/webhook-receiver),
/// which logs every request and fails on demand by path. Killed when the value goes away.
public final class WebhookReceiver {
    let process: ChildProcess
    public let port: Int
    let log: String
    let directory: String

    /// Starts it; `secret` is the key it checks request signatures with.
    public init(secret: String = "s3cret") async throws {
        directory = NSTemporaryDirectory() + "webhook-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        log = directory + "/requests.jsonl"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../webhook-receiver/receiver.py").standardized.path
        let portFile = directory + "/port"
        process = try ChildProcess("/usr/bin/env", ["python3", script, log, secret], stdout: portFile)
        var port: Int?
        for _ in 0..<500 where port == nil {
            let text = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
            port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            if port == nil { try await Task.sleep(for: .microseconds(10_000)) }
        }
        guard let port else { throw ChildProcessError("the webhook receiver (python3 \(script)) did not start") }
        self.port = port
    }

    deinit {
        process.signal(SIGKILL)
        process.reap()
        try? FileManager.default.removeItem(atPath: directory)
    }

    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// The requests so far, one JSON object per request: `path`, `key` (the Idempotency-Key),
    /// `attempt`, `signed` (whether the signature checked out), `auth`, `body`.
    public var requests: [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
