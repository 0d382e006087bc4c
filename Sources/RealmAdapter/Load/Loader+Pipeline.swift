import Foundation

/// Reading and writing overlap: one thread reads and maps rows while the caller writes the
/// previous batch.
extension Loader {
    /// Runs `produce` on a thread of its own, in batches of `loader.batchSize`, while this
    /// thread runs `consume` on each batch; at most two batches wait in between.
    func pipeline(produce: (_ emit: (Entry) throws -> Void) throws -> Void, consume: ([Entry]) throws -> Void) throws {
        let size = configuration.batchSize
        try pipeline(
            empty: {
                var b: [Entry] = []
                b.reserveCapacity(size)
                return b
            },
            produce: { add in
                try withoutActuallyEscaping(add) { add in try produce { e in try add { $0.append(e) } } }
            }, consume: consume)
    }

    /// The same with batches of any form: `produce` adds each row to the batch being filled
    /// with `add` (on the reading thread); a batch of `loader.batchSize` rows goes to `consume`.
    func pipeline<Batch>(
        empty: @escaping () throws -> Batch,
        produce: (_ add: ((inout Batch) throws -> Void) throws -> Void) throws -> Void,
        consume: (Batch) throws -> Void
    ) throws {
        let queue = BoundedQueue<Batch>(capacity: 2)
        let size = configuration.batchSize
        let done = DispatchSemaphore(value: 0)
        try withoutActuallyEscaping(produce) { produce in
            // The thread gets `produce` through a box it empties: the Thread object may keep its
            // block (and what the block holds) a little after the work is done, and `produce`
            // must be gone by the end of `withoutActuallyEscaping` (a runtime check, seen to fail).
            let producer = Handoff(produce)
            let batches = UncheckedBox(empty)
            let thread = Thread {
                Self.produceBatches(producer.take(), empty: batches.value, size: size, into: queue)
                done.signal()
            }
            thread.stackSize = 4 << 20
            thread.start()
            defer { done.wait() }
            do {
                while let batch = try queue.take() {
                    try consume(batch)
                    // Freeing a batch (and the values its transaction shares with it) is real
                    // work: leave it to another thread, so that this one goes on writing. The
                    // batch is handed over, not copied, so that the last release is not here.
                    Self.dispose(consume batch)
                }
            } catch {
                queue.cancel()
                throw error
            }
        }
    }

    /// The reading thread's part of ``pipeline(empty:produce:consume:)``.
    private static func produceBatches<Batch>(
        _ produce: (_ add: ((inout Batch) throws -> Void) throws -> Void) throws -> Void,
        empty: @escaping () throws -> Batch, size: Int, into queue: BoundedQueue<Batch>
    ) {
        do {
            var batch = try empty()
            var rows = 0
            try produce { add in
                try add(&batch)
                rows += 1
                if rows == size {
                    try queue.put(batch)
                    batch = try empty()
                    rows = 0
                }
            }
            if rows > 0 { try queue.put(batch) }
            queue.finish()
        } catch {
            queue.finish(error)
        }
    }
}

extension Loader {
    static let disposal = DispatchQueue(label: "realm-adapter.load.disposal")

    /// Frees `value` on the disposal queue.
    static func dispose<T>(_ value: consuming T) {
        let box = UncheckedBox(value)
        disposal.async { withExtendedLifetime(box) {} }
    }
}

private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// A value handed to another thread once: ``take()`` leaves nothing behind in the box.
private final class Handoff<T>: @unchecked Sendable {
    // @unchecked: written before the thread starts, taken once by that thread.
    private var value: T?
    init(_ value: T) { self.value = value }
    func take() -> T {
        defer { value = nil }
        return value!
    }
}
