import Logging
import RealmAdapter
import ServiceLifecycle
import Synchronization

/// The daemon's two services over a prepared connector, run in the test's process while a body
/// runs: what the scenarios and the Postgres sync tests start instead of the binary.
public enum InProcessDaemon {
    /// How a run ends once its body is done.
    public enum Ending: Sendable {
        /// SIGTERM's way: the transaction in flight finishes and is confirmed.
        case graceful
        /// Abruptly: its tasks cancelled, nothing confirmed or tidied on the way out, as close
        /// to a kill as one process gets.
        case crash
        /// When it stops by itself (a failpoint's error); that error is returned. The body can
        /// go on writing until then (``hasStopped``); if the daemon has not stopped 30 s after
        /// the body ends, the run fails saying so instead of waiting for ever.
        case whenItStops
    }

    /// Whether the daemon the calling body runs beside has stopped (for a body that writes until
    /// a failpoint stops it: how many writes that takes depends on how the daemon groups them).
    public static var hasStopped: Bool { stopped?.value.withLock { $0 } ?? false }

    final class Flag: Sendable {
        let value = Mutex(false)
    }
    @TaskLocal static var stopped: Flag?

    /// Runs `body` while both directions sync `store` with `connector`, and ends as `ending` says.
    @discardableResult
    public static func run(
        _ connector: any DatabaseConnector, configuration config: Configuration, mapping: Mapping,
        store: RealmStore, logger: Logger, ending: Ending = .graceful, _ body: () async throws -> Void
    ) async throws -> Error? {
        let adapter = try Adapter(
            store: store, name: config.realm.adapterName, pathRegex: config.realm.effectivePathRegex)
        let mappings = SharedMapping(mapping)
        let applier = RealmApplier(
            store: store, mappings: mappings, origin: adapter.origin, source: connector.sourceName)
        let retry = config.database!.retry
        let services: [any Service] = [
            try DatabaseToRealmService(
                connector: connector, applier: applier, adapter: adapter, retry: retry, logger: logger),
            RealmToDatabaseService(
                connector: connector, adapter: adapter, mappings: mappings, retry: retry,
                ignoreSQLErrors: config.ignoreSQLErrors,
                applyRealmSchemaChanges: config.database!.applyRealmSchemaChanges, logger: logger),
        ]
        let group = ServiceGroup(
            configuration: .init(services: services.map { .init(service: $0) }, logger: logger))
        let stopped = Flag()
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { stopped.value.withLock { $0 = true } }
                try await group.run()
            }
            defer { tasks.cancelAll() }
            do {
                try await $stopped.withValue(stopped) { try await body() }
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                await connector.shutdown()
                throw error
            }
            switch ending {
            case .graceful:
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                await connector.shutdown()
                return nil
            case .crash:
                tasks.cancelAll()
                try? await tasks.waitForAll()
                return nil
            case .whenItStops:
                tasks.addTask {
                    try await Task.sleep(for: .seconds(30))
                    throw ScenarioFailure(
                        description: "the daemon did not stop by itself within 30 s of the body's end")
                }
                // As `realm-adapter run` does when it stops on an error: its connections closed.
                do {
                    try await tasks.next()  // the daemon's end or the deadline's, whichever is first
                } catch let failure as ScenarioFailure {
                    tasks.cancelAll()
                    try? await tasks.waitForAll()
                    await connector.shutdown()
                    throw failure
                } catch {
                    await connector.shutdown()
                    return error
                }
                await connector.shutdown()
                throw ScenarioFailure(description: "the daemon stopped without an error")
            }
        }
    }
}
