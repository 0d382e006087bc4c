import Synchronization

/// Reads an async sequence ahead into a bounded buffer, so that its consumer takes at once
/// everything that has arrived (``next(atMost:)``) instead of one element per wake-up: a
/// consumer that falls behind catches up in fewer, larger steps.
///
/// ``run()`` pumps the sequence, once, in a child task of the one consumer's (cancelling the
/// consumer cancels it). When the consumer stops taking, it calls ``close()`` (which ends a pump
/// waiting for room) and cancels the pump's task (which ends one waiting for the sequence).
final class ReadAhead<Base: AsyncSequence & Sendable>: Sendable where Base.Element: Sendable {
    typealias Element = Base.Element

    private struct State {
        var buffer: [Element] = []
        /// Set once the sequence ends: nil error for its end, or the error it failed with.
        var end: Result<Void, Error>?
        var closed = false
        var consumer: CheckedContinuation<Void, Never>?
        var producer: CheckedContinuation<Void, Never>?
    }

    private let base: Base
    private let limit: Int
    private let state = Mutex(State())

    /// - Parameter limit: how many elements are read ahead at most.
    init(_ base: Base, limit: Int) {
        self.base = base
        self.limit = max(limit, 1)
    }

    /// Pumps the sequence until it ends, fails, or the consumer closes.
    func run() async {
        var result: Result<Void, Error> = .success(())
        do {
            for try await element in base {
                let room = state.withLock { s -> Bool in
                    s.buffer.append(element)
                    resume(&s.consumer)
                    return s.buffer.count < limit || s.closed
                }
                if !room { await waitForRoom() }
                if state.withLock({ $0.closed }) { break }
            }
        } catch {
            result = .failure(error)
        }
        state.withLock { s in
            s.end = result
            resume(&s.consumer)
        }
    }

    /// The elements that have arrived, at most `atMost` of them, waiting for one if none has;
    /// empty once the sequence has ended (a cancelled pump ends it), its error if it failed.
    func next(atMost: Int) async throws -> [Element] {
        while true {
            let taken = state.withLock { s -> Result<[Element], Error>? in
                if !s.buffer.isEmpty {
                    let n = min(max(atMost, 1), s.buffer.count)
                    let batch = Array(s.buffer.prefix(n))
                    s.buffer.removeFirst(n)
                    resume(&s.producer)
                    return .success(batch)
                }
                switch s.end {
                case .success?: return .success([])
                case .failure(let e)?: return .failure(e)
                case nil: return nil
                }
            }
            if let taken { return try taken.get() }
            await withCheckedContinuation { c in
                state.withLock { s in
                    precondition(s.consumer == nil, "ReadAhead has one consumer")
                    if !s.buffer.isEmpty || s.end != nil { c.resume() } else { s.consumer = c }
                }
            }
        }
    }

    /// The consumer takes no more: the pump stops at its next element (or at once if it waits for room).
    func close() {
        state.withLock { s in
            s.closed = true
            resume(&s.producer)
        }
    }

    private func waitForRoom() async {
        await withCheckedContinuation { c in
            state.withLock { s in
                if s.buffer.count < limit || s.closed { c.resume() } else { s.producer = c }
            }
        }
    }

    private func resume(_ waiter: inout CheckedContinuation<Void, Never>?) {
        waiter?.resume()
        waiter = nil
    }
}
