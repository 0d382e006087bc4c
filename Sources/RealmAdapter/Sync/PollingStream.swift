/// The change stream of a connector that polls (a change log, change tracking): `round` runs,
/// then again `interval` after it ends, until the stream's consumer stops or a round throws.
/// Each round gives the transactions it read, in order.
///
/// Cancelling ends the stream without an error; a round's error ends it with that error, which
/// the sync service retries as the connector says (``RelationalConnector/isTransient(_:)``).
public func pollingStream(
    every interval: Duration, _ round: @escaping @Sendable () async throws -> [DatabaseTransaction]
) -> AsyncThrowingStream<DatabaseTransaction, Error> {
    AsyncThrowingStream { continuation in
        let task = Task {
            do {
                while !Task.isCancelled {
                    for tx in try await round() { continuation.yield(tx) }
                    try await Task.sleep(for: interval)
                }
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
