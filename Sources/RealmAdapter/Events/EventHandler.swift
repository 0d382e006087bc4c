import Logging
import Metrics
import ServiceLifecycle

/// Calls a handler with each transaction of the Realms whose path matches a regular expression,
/// and what it changed: the legacy "processing data change events", in Swift.
///
/// ```swift
/// let handler = try EventHandler(store: store, name: "coupons", pathRegex: "^/shop$") { event in
///     for coupon in event.changes[type: "Coupon"]?.inserted ?? [] { … }
/// }
/// try await ServiceGroup(services: [handler], logger: logger).run()
/// ```
///
/// It is durable and at least once: an event's cursor advances only when the handler returns,
/// so a handler killed mid-event gets that event again on the next start (its ``ChangeEvent/version``
/// tells a repeat), and none is skipped. A handler that throws is called again with the same
/// event after a backoff (`retry`), which holds back only that Realm; after `retry.attempts`
/// attempts (0: never) the event is set aside as an ``EventDeadLetter`` and the Realm goes on.
/// Writes made through ``ChangeEvent/write(_:)`` or ``write(to:_:)`` do not come back to the
/// handler unless `seesOwnWrites`. A graceful shutdown cancels the handler's task for the event in
/// flight (a webhook's request ends at once); that event comes again on the next start.
public final class EventHandler: Service, Sendable {
    /// The adapter that keeps this handler's place per Realm (`events:<name>`).
    public let adapter: Adapter
    public let name: String
    public let retry: DatabaseConfiguration.Retry
    public let seesOwnWrites: Bool
    /// Whether its deliveries succeed (`/health/ready`).
    public let health = DeliveryHealth()
    private let handle: @Sendable (ChangeEvent) async throws -> Void
    private let logger: Logger
    /// `realm_adapter_events_total{handler}`, `realm_adapter_event_failures_total{handler}`,
    /// `realm_adapter_event_dead_letters_total{handler}` (a label per handler or webhook, not per Realm).
    private let handled: Counter
    private let failures: Counter
    private let setAsideCount: Counter

    /// Registers (or re-opens) the handler `name`. When first registered it starts at each
    /// existing Realm's current version: events are for what is written from then on (and for
    /// every transaction of Realms created later).
    public init(
        store: RealmStore, name: String, pathRegex: String, seesOwnWrites: Bool = false,
        retry: DatabaseConfiguration.Retry = .init(), logger: Logger = Logger(label: "realm-adapter.events"),
        _ handle: @escaping @Sendable (ChangeEvent) async throws -> Void
    ) throws {
        adapter = try Adapter(
            store: store, name: "events:\(name)", pathRegex: pathRegex, recordsChanges: true, logger: logger)
        self.name = name
        self.retry = retry
        self.seesOwnWrites = seesOwnWrites
        self.handle = handle
        handled = Counter(label: "realm_adapter_events_total", dimensions: [("handler", name)])
        failures = Counter(label: "realm_adapter_event_failures_total", dimensions: [("handler", name)])
        setAsideCount = Counter(label: "realm_adapter_event_dead_letters_total", dimensions: [("handler", name)])
        var logger = logger
        logger[metadataKey: "handler"] = "\(name)"
        self.logger = logger
    }

    /// The origin of writes made through ``write(to:_:)``.
    public var writeOrigin: String { seesOwnWrites ? "\(adapter.origin):handler" : adapter.origin }

    /// A write transaction on the Realm at `path` whose changes do not come back to this handler
    /// as events (unless `seesOwnWrites`): for a handler that writes its result back.
    @discardableResult
    public func write<T>(to path: String, _ body: (inout WriteTransaction) throws -> T) throws
        -> (result: T, version: Int64)
    {
        try adapter.store.write(to: path, origin: writeOrigin, body)
    }

    public func run() async throws {
        let (paths, input) = AsyncStream.makeStream(of: String.self)
        let feed = Task { [adapter] in
            for await path in adapter.pathsWithChanges() { input.yield(path) }
            input.finish()
        }
        // At most one waiting retry per Realm.
        var retries: [String: Task<Void, Never>] = [:]
        defer {
            feed.cancel()
            for r in retries.values { r.cancel() }
        }
        var failing: [String: (version: Int64, attempts: Int, until: ContinuousClock.Instant)] = [:]
        for await path in paths.cancelOnGracefulShutdown() {
            if let f = failing[path], ContinuousClock.now < f.until { continue }  // its retry comes later
            do {
                // A batch, then the Realm goes to the back of the line: a busy Realm does not starve the others.
                // A shutdown cancels the event in flight (a hung endpoint must not hold the stop): it
                // was not advanced past, so it comes again on the next start.
                let caughtUp = try await cancelWhenGracefulShutdown { try await self.drain(path, batches: 1) }
                if !caughtUp { input.yield(path) }
                failing[path] = nil
                health.delivered(path)
            } catch let failure as HandlerFailure where Task.isShuttingDownGracefully || Task.isCancelled {
                logger.info(
                    "Stopping; the event in flight comes again on the next start",
                    metadata: ["realm.path": "\(path)", "version": "\(failure.version)"])
                break
            } catch let failure as HandlerFailure {
                let attempts = failing[path].map { $0.version == failure.version ? $0.attempts + 1 : 1 } ?? 1
                if retry.attempts > 0, attempts >= retry.attempts {
                    try await setAside(path, failure, attempts: attempts)
                    failing[path] = nil
                    health.delivered(path)
                    input.yield(path)
                    continue
                }
                let delay = retry.delay(beforeAttempt: attempts + 1)
                logger.warning(
                    "The event handler failed; trying again",
                    metadata: [
                        "realm.path": "\(path)", "version": "\(failure.version)", "attempt": "\(attempts)",
                        "delay": "\(delay)", "error": "\(failure.error)",
                    ])
                failing[path] = (failure.version, attempts, ContinuousClock.now + delay)
                health.failed(
                    path, "\(name): \(path) version \(failure.version) failed \(attempts) time(s): \(failure.error)")
                retries[path] = Task {
                    try? await Task.sleep(for: delay)
                    input.yield(path)
                }
            }
        }
    }

    /// Calls the handler with each pending event of the Realm at `path`, in order, advancing
    /// past those it returned from; returns when the Realm is caught up.
    ///
    /// Events are read ``batchLimit`` at a time, and the cursor moves once per batch, or before
    /// a failure: a handler killed mid-batch gets the batch's unfinished events again.
    ///
    /// - Throws: ``HandlerFailure`` when the handler throws (that event stays pending).
    /// - Parameter batches: at most this many batches (then it returns false if more wait).
    /// - Returns: whether the Realm is caught up.
    @discardableResult
    public func drain(_ path: String, batches: Int = .max) async throws -> Bool {
        let (store, adapter, origin, limit) = (adapter.store, adapter, writeOrigin, batchLimit)
        for _ in 0..<batches {
            let batch = try await store.perform { () -> [(RealmTransaction, Result<ChangeSet, RealmAdapterError>)] in
                let pending = try adapter.pending(path, limit: limit)
                return zip(pending, try store.changeSets(of: pending, in: path)).map { ($0, $1) }
            }
            guard !batch.isEmpty else { return true }
            var lastHandled: Int64?
            func advance() async throws {
                // Not flushed on its own: a power loss replays a few events, which at least once allows.
                guard let v = lastHandled else { return }
                try await store.perform { try adapter.advance(path, through: v, durable: false) }
            }
            for (tx, result) in batch {
                switch result {
                case .failure(let e):  // not recorded: no attempt can help
                    try await advance()
                    try await setAside(path, HandlerFailure(version: tx.version, error: e), attempts: 0)
                case .success(let changes):
                    let realm = RealmSnapshot(store: store, path: path, version: tx.version)
                    do {
                        try await handle(ChangeEvent(changes: changes, realm: realm, writeOrigin: origin))
                    } catch {
                        failures.increment()
                        try await advance()
                        throw HandlerFailure(version: tx.version, error: error)
                    }
                    handled.increment()
                }
                lastHandled = tx.version
            }
            try await advance()
            // A short batch was the last one (what commits meanwhile brings the path again).
            if batch.count < limit { return true }
        }
        return false
    }

    /// Events read (and their change sets computed) at once when a handler is behind.
    public let batchLimit = 64

    private func setAside(_ path: String, _ failure: HandlerFailure, attempts: Int) async throws {
        setAsideCount.increment()
        let letter = EventDeadLetter(
            handler: name, path: path, version: failure.version, attempts: attempts, error: "\(failure.error)")
        logger.error(
            "Setting the event aside after \(attempts) attempts; the Realm's later events go on",
            metadata: ["realm.path": "\(path)", "version": "\(failure.version)", "error": "\(failure.error)"])
        let adapter = self.adapter
        try await adapter.store.perform {
            try letter.record(in: adapter.store)
            try adapter.advance(path, through: failure.version)
        }
    }

    /// The handler threw for the event at `version`.
    public struct HandlerFailure: Error, CustomStringConvertible {
        public var version: Int64
        public var error: any Error
        public var description: String { "The event handler failed at version \(version): \(error)" }
    }
}
