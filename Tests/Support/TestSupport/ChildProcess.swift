import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process for tests, started with `posix_spawn` and reaped with `waitpid`.
///
/// Foundation's `Process` was seen to miss the exit of a child on Linux when several tests
/// start processes at once (the child stays a zombie and `waitUntilExit` never returns), which
/// hangs the whole suite. This does the few things the tests need, with nothing in between.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `status` is guarded by `lock`; everything else is immutable.
    public let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?
    private var maxRSS: Int?

    /// Starts `executable` with `arguments`. Standard input, output and error go to the given
    /// files (nil: /dev/null for input, inherited for output and error).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: String? = nil, stdout: String? = nil, stderr: String? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        if let stdout { posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o644) }
        if let stderr { posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in env { free(p) } }
        // A child starts as from a shell: no signal blocked, none ignored. The spawning thread
        // (one of Swift's, which block signals) would otherwise pass its mask on, and a child
        // would never see SIGTERM, SIGINT or its own SIGALRM (pgbench -T ran for ever).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGALRM, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, env)
        guard rc == 0 else { throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    /// Waits until the process exits; returns its exit status (128 + signal when killed).
    ///
    /// The wait blocks a thread of its own, never one of the cooperative pool: the tests run on a
    /// pool of as many threads as cores (two here), and a test blocking one of them for a child's
    /// whole run stalls every other test, whose deadlines then fail for nothing.
    @discardableResult
    public func wait() async -> Int32 {
        if let s = lock.withLock({ status }) { return s }
        return await withCheckedContinuation { done in
            Thread.detachNewThread { done.resume(returning: self.reap()) }
        }
    }

    /// Blocks until the process exits: for a process already sent SIGKILL, in cleanup code that
    /// cannot await (`deinit`, `defer`). Anywhere else, ``wait()``.
    @discardableResult
    public func reap() -> Int32 {
        if let s = lock.withLock({ status }) { return s }
        var raw: Int32 = 0
        var usage = rusage()
        var r: pid_t
        repeat { r = wait4(pid, &raw, 0, &usage) } while r == -1 && errno == EINTR
        // ECHILD: `isRunning` reaped it meanwhile and recorded its status.
        if r == -1, let s = lock.withLock({ status }) { return s }
        lock.withLock { maxRSS = usage.ru_maxrss * 1024 }
        return record(raw)
    }

    /// The process's peak resident memory in bytes, once ``wait()`` returned.
    public var peakMemory: Int? { lock.withLock { maxRSS } }

    /// Whether the process is still running (reaps it if it has exited).
    public var isRunning: Bool {
        if lock.withLock({ status }) != nil { return false }
        var raw: Int32 = 0
        let r = waitpid(pid, &raw, WNOHANG)
        if r == pid {
            _ = record(raw)
            return false
        }
        return r == 0
    }

    public func signal(_ sig: Int32) { kill(pid, sig) }

    private func record(_ raw: Int32) -> Int32 {
        let code: Int32 = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        lock.withLock { status = code }
        return code
    }

    /// Runs a command to completion with optional standard input text; returns its status and output.
    public static func run(
        _ executable: String, _ arguments: [String], input: String? = nil,
        environment: [String: String]? = nil
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let base = NSTemporaryDirectory() + "child-\(UUID().uuidString)"
        defer { for s in [".in", ".out", ".err"] { try? FileManager.default.removeItem(atPath: base + s) } }
        if let input { try input.write(toFile: base + ".in", atomically: true, encoding: .utf8) }
        let p = try ChildProcess(
            executable, arguments, environment: environment, stdin: input == nil ? nil : base + ".in",
            stdout: base + ".out", stderr: base + ".err")
        let status = await p.wait()
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return (status, out, err)
    }

    /// The path of an executable built next to the running test bundle.
    public static func built(_ name: String) -> String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return dir.appendingPathComponent(name).path
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
