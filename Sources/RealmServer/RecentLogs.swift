import Logging
import RealmAdapter
import Synchronization

/// The process's recent log lines, kept in memory for Studio's Logs page: at most `capacity`,
/// the oldest dropped first. What the code logs holds no secrets, and no row values at info.
public final class RecentLogs: Sendable {
    public struct Line: Sendable {
        public var time: Timestamp
        public var level: Logger.Level
        public var label: String
        public var message: String
        /// `key=value` pairs, sorted by key.
        public var metadata: String
    }

    /// The process's: the CLI adds ``handler(label:)`` to every logger it makes.
    public static let shared = RecentLogs(capacity: 2000)

    let capacity: Int
    private let ring = Mutex<(lines: [Line], next: Int)>(([], 0))

    public init(capacity: Int) { self.capacity = capacity }

    /// A handler that keeps what a logger of `label` logs here.
    public func handler(label: String) -> any LogHandler { Handler(label: label, logs: self) }

    func append(_ line: Line) {
        ring.withLock { r in
            if r.lines.count < capacity {
                r.lines.append(line)
            } else {
                r.lines[r.next] = line
                r.next = (r.next + 1) % capacity
            }
        }
    }

    /// The lines at `level` or above, newest first, at most `limit`.
    public func lines(atLeast level: Logger.Level, limit: Int) -> [Line] {
        let ordered = ring.withLock { r in Array(r.lines[r.next...] + r.lines[..<r.next]) }
        return Array(ordered.reversed().lazy.filter { $0.level >= level }.prefix(limit))
    }

    struct Handler: LogHandler {
        let label: String
        let logs: RecentLogs
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }.sorted { $0.key < $1.key }
            logs.append(
                Line(
                    time: Timestamp(.now), level: event.level, label: label, message: "\(event.message)",
                    metadata: all.map { "\($0.key)=\($0.value)" }.joined(separator: " ")))
        }
    }
}
