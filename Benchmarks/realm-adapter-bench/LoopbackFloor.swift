import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The machine's floor for `serve`'s subscription latency: a message of the same size written
/// to each of `connections` loopback TCP sockets by two threads (one per core, as the server's
/// two event loops), and read by one thread waiting on all of them (`poll`), with no WebSocket,
/// JSON, store or framework in between. Per message, the time from the round's first write to
/// its read: what this machine's kernel alone costs to fan one message out.
enum LoopbackFloor {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Every message's latency (ms), `rounds` rounds `intervalMs` apart.
    static func measure(connections n: Int, bytes: Int, rounds: Int, intervalMs: Int) throws -> [Double] {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { a in
            try a.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                guard bind(listener, a, length) == 0, listen(listener, 4096) == 0,
                    getsockname(listener, a, &length) == 0
                else { throw Failure(description: "bind/listen: errno \(errno)") }
            }
        }
        var servers: [Int32] = []
        var clients: [Int32] = []
        defer {
            for fd in servers + clients { close(fd) }
        }
        for _ in 0..<n {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }
            let server = accept(listener, nil, nil)
            guard client >= 0, connected == 0, server >= 0 else {
                throw Failure(description: "connect: errno \(errno)")
            }
            var one: Int32 = 1
            setsockopt(server, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            servers.append(server)
            clients.append(client)
        }
        let start = Atomic<UInt64>(0)
        let done = DispatchSemaphore(value: 0)
        let readings = Mutex<[Double]>([])
        let readers = clients
        Thread.detachNewThread {
            var waiting = readers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            var latencies: [Double] = []
            latencies.reserveCapacity(n * rounds)
            while latencies.count < n * rounds {
                guard poll(&waiting, nfds_t(waiting.count), 1000) > 0 else { break }
                for i in waiting.indices where waiting[i].revents != 0 {
                    let got = read(waiting[i].fd, &buffer, buffer.count)
                    let latency = Double(now() - start.load(ordering: .acquiring)) / 1e6
                    // A read may carry more than one message, if the reader fell behind.
                    for _ in 0..<max(0, got / bytes) { latencies.append(latency) }
                }
            }
            readings.withLock { $0 = latencies }
            done.signal()
        }
        let message = [UInt8](repeating: UInt8(ascii: "x"), count: bytes)
        let writers = servers
        for _ in 0..<rounds {
            usleep(UInt32(intervalMs * 1000))
            start.store(now(), ordering: .releasing)
            DispatchQueue.concurrentPerform(iterations: 2) { half in
                for fd in writers[(half * n / 2)..<((half + 1) * n / 2)] { _ = write(fd, message, message.count) }
            }
        }
        done.wait()
        let latencies = readings.withLock { $0 }
        guard latencies.count == n * rounds else {
            throw Failure(description: "the floor's reader saw \(latencies.count) of \(n * rounds) messages")
        }
        return latencies
    }

    /// The monotonic clock, in ns.
    private static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
