import Synchronization

/// Whether an event handler delivers (`/health/ready`): not while the delivery of some Realm's
/// event is failing and waiting for its retry. Set by the handler; read by the CLI.
public final class DeliveryHealth: Sendable {
    /// Why each failing Realm's delivery fails, by path.
    private let failing = Mutex([String: String]())

    public init() {}

    /// Whether it delivers, and why not when it does not (the first failing Realm, and how many fail).
    public var readiness: (ready: Bool, reason: String) {
        failing.withLock { f in
            guard let first = f.keys.min() else { return (true, "delivering") }
            let more = f.count > 1 ? " (and \(f.count - 1) more Realm(s))" : ""
            return (false, f[first]! + more)
        }
    }

    func failed(_ path: String, _ why: String) { failing.withLock { $0[path] = why } }

    func delivered(_ path: String) {
        failing.withLock { f in if !f.isEmpty { f[path] = nil } }
    }
}
