import Synchronization

/// Whether the daemon is ready to serve (`/health/ready`): its change stream runs, and no
/// transaction the database refused is waiting. Set by the sync services; read by the CLI.
public final class SyncHealth: Sendable {
    private struct State {
        var streaming = false
        var why = "not connected to the database yet"
        var blocked: String?
    }
    private let state = Mutex(State())

    public init() {}

    /// Whether it is ready, and why not when it is not.
    public var readiness: (ready: Bool, reason: String) {
        state.withLock { s in
            if let b = s.blocked { return (false, b) }
            return s.streaming ? (true, "streaming") : (false, s.why)
        }
    }

    /// Why it is blocked: a Realm transaction the database refused (the daemon stops with it).
    public var blockedReason: String? { state.withLock { $0.blocked } }

    func streaming() { state.withLock { $0.streaming = true } }

    func notStreaming(_ why: String) {
        state.withLock {
            $0.streaming = false
            $0.why = why
        }
    }

    func blocked(_ why: String) { state.withLock { $0.blocked = why } }
}
