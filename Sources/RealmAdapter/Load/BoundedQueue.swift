import Foundation

/// A queue between one producer thread and one consumer thread that holds at most `capacity`
/// items: the producer waits while it is full, so memory stays bounded.
final class BoundedQueue<Item>: @unchecked Sendable {
    // @unchecked: every field is used under `condition`.
    private let condition = NSCondition()
    private var items: [Item] = []
    private var finished = false
    private var failure: Error?
    private var cancelled = false
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    struct Cancelled: Error {}

    /// Adds an item, waiting for room. Throws ``Cancelled`` once the consumer gave up.
    func put(_ item: Item) throws {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw Cancelled() }
        items.append(item)
        condition.broadcast()
    }

    /// The producer is done: with an error, the consumer's next ``take()`` throws it.
    func finish(_ error: Error? = nil) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next item, or nil when the producer finished. Rethrows the producer's error.
    func take() throws -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !finished { condition.wait() }
        if !items.isEmpty {
            condition.broadcast()
            return items.removeFirst()
        }
        if let failure { throw failure }
        return nil
    }

    /// The consumer gives up: the producer's next ``put(_:)`` throws.
    func cancel() {
        condition.lock()
        cancelled = true
        items.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
