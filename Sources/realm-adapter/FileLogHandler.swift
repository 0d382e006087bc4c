import Foundation
import Logging
import RealmAdapter

/// Appends log lines to a file (the config's `logFile`), one line per message.
struct FileLogHandler: LogHandler {
    // The handle is shared by every logger of the process; writes go through one lock.
    private final class Sink: @unchecked Sendable {
        let handle: FileHandle
        let lock = NSLock()
        init(_ handle: FileHandle) { self.handle = handle }
        func write(_ line: String) {
            lock.lock()
            defer { lock.unlock() }
            handle.write(Data(line.utf8))
        }
    }

    private let sink: Sink
    private let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, handle: FileHandle) {
        self.label = label
        self.sink = Sink(handle)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let meta =
            all.isEmpty
            ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.write("\(Timestamp(Date()).iso8601) \(event.level) \(label):\(meta) \(event.message)\n")
    }
}
