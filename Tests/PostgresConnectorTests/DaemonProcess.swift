import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport

/// The real `realm-adapter run`, as a child process.
final class DaemonProcess {
    let process: ChildProcess
    let log: String
    /// Its configuration file.
    let config: String

    /// - Parameter failpoints: `REALM_ADAPTER_FAILPOINTS` for the daemon (see ``Failpoint``).
    init(config: String, log: String, failpoints: String? = nil, arguments: [String] = []) throws {
        self.log = log
        self.config = config
        process = try ChildProcess(
            ChildProcess.built("realm-adapter"), ["run", "--config", config, "--log-level", "debug"] + arguments,
            environment: Self.environment(failpoints: failpoints), stdout: log, stderr: log)
    }

    /// A test that throws before stopping its daemon must not leave it running (and using CPU)
    /// after the test run: it is killed when the test lets go of it.
    deinit {
        if process.isRunning { kill9() }
    }

    /// This process's environment, with `REALM_ADAPTER_FAILPOINTS` set to `failpoints` (or removed).
    static func environment(failpoints: String?) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[Failpoint.environmentVariable] = failpoints
        return environment
    }

    /// Waits for the daemon to be killed by `failpoint` (it exits with SIGKILL and its log says
    /// the failpoint fired); throws if it exits otherwise or not in time.
    func waitForFailpointKill(_ failpoint: Failpoint, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw DaemonError("\(failpoint) did not fire in time") }
            try await Task.sleep(for: .milliseconds(20))
        }
        let status = await process.wait()
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard status == 128 + SIGKILL, text.contains("failpoint \(failpoint.name): ") else {
            throw DaemonError(
                "expected \(failpoint) to kill the daemon; it exited with \(status):\n" + String(text.suffix(3000)))
        }
    }

    /// Waits until the daemon logs that it is syncing.
    func waitUntilSyncing(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("Syncing") { return }
            guard process.isRunning else {
                throw DaemonError(
                    "the daemon exited early:\n" + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw DaemonError("the daemon did not start syncing in time")
    }

    func kill9() {
        process.signal(SIGKILL)
        process.reap()
    }

    /// SIGTERM, then the exit status.
    func terminate() async -> Int32 {
        process.signal(SIGTERM)
        return await process.wait()
    }

    /// A fresh directory with a configuration file for `settings` (store inside it).
    static func workspace(_ settings: PostgresSettings, schema: String) throws -> (dir: String, configFile: String) {
        let dir = try directory()
        return (dir, try SyncHarness.configFile(settings, store: dir + "/store", schema: schema, directory: dir))
    }

    /// A fresh directory for a daemon's log and configuration.
    static func directory() throws -> String {
        let dir = NSTemporaryDirectory() + "realm-adapter-daemon-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Changes a configuration file in place; throws if `old` is not in it (a test would
    /// otherwise run with the configuration it meant to change).
    static func edit(_ file: String, replacing old: String, with new: String) throws {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        guard text.contains(old) else { throw DaemonError("\(file) has no \(old) to replace") }
        try text.replacingOccurrences(of: old, with: new).write(toFile: file, atomically: true, encoding: .utf8)
    }

    struct DaemonError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }
}

extension SyncHarness {
    /// Writes the configuration to a file for a daemon process.
    static func configFile(_ settings: PostgresSettings, store: String, schema: String, directory: String) throws
        -> String
    {
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
