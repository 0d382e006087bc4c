import Logging
import RealmAdapter
import ServiceLifecycle

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
        /// When it stops by itself (a failpoint's error); that error is returned.
        case whenItStops
    }

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
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            do {
                try await body()
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
                // As `realm-adapter run` does when it stops on an error: its connections closed.
                do {
                    try await tasks.waitForAll()
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
