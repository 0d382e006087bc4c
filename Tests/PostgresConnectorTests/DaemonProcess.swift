import Foundation
import PostgresConnector
import RealmAdapter

/// The real `realm-adapter run`, as a child process.
final class DaemonProcess {
    static var binary: String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("realm-adapter").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return dir.appendingPathComponent("realm-adapter").path
    }

    let process = Process()
    let log: String

    init(config: String, log: String) throws {
        self.log = log
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["run", "--config", config, "--log-level", "debug"]
        let handle = FileHandle(forWritingAtPath: log)!
        handle.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
    }

    /// Waits until the daemon logs that it is syncing.
    func waitUntilSyncing(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("Syncing") { return }
            guard process.isRunning else { throw DaemonError("the daemon exited early:\n" + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")) }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw DaemonError("the daemon did not start syncing in time")
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then the exit status.
    func terminate() -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }

    struct DaemonError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }
}

extension SyncHarness {
    /// Writes the configuration to a file for a daemon process.
    static func configFile(_ settings: PostgresSettings, store: String, schema: String, directory: String) throws -> String {
        let file = directory + "/adapter.json"
        try """
            {"realm": {"store": "\(store)", "path": "/SQLDemo", "adapterName": "pg"},
             "database": {"type": "postgres", "host": "\(settings.host!)", "port": \(settings.port!), "user": "\(settings.user!)",
                          "database": "\(settings.database!)", "createSchema": true, "slotName": "\(settings.database!)",
                          "retry": {"attempts": 0, "delayMs": 100, "maxDelayMs": 1000}},
             "schema": \(schema)}
            """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}
