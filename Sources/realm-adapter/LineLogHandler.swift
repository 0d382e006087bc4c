import Foundation
import Logging
import RealmAdapter

/// A file that every logger of the process writes whole lines to, through one lock.
final class LineSink: @unchecked Sendable {
    let handle: FileHandle
    let lock = NSLock()
    init(_ handle: FileHandle) { self.handle = handle }

    func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        handle.write(Data(line.utf8))
    }
}

/// Writes each log message as one line to a ``LineSink``: as text (the log file's form:
/// time, level, label, metadata, message), or as a JSON object (`--log-format json`: `time`,
/// `level`, `label`, `message`, `source`, then each metadata key as a field; one that would
/// replace these is prefixed `meta.`). Either holds what the code logs, which never includes
/// secrets or, at info, row values.
struct LineLogHandler: LogHandler {
    private let sink: LineSink
    private let label: String
    private let format: LogFormat
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, sink: LineSink, format: LogFormat) {
        self.label = label
        self.sink = sink
        self.format = format
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }.sorted { $0.key < $1.key }
        switch format {
        case .text:
            let meta = all.isEmpty ? "" : " " + all.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            sink.write("\(Timestamp(Date()).iso8601) \(event.level) \(label):\(meta) \(event.message)\n")
        case .json:
            var members = Self.fields(level: event.level, label: label, message: "\(event.message)")
            members.append(.init("source", .string(event.source)))
            let fixed = Set(members.map(\.key))
            for (key, value) in all {
                members.append(.init(fixed.contains(key) ? "meta." + key : key, Self.json(value)))
            }
            sink.write(JSONValue.object(members).serialized() + "\n")
        }
    }

    /// The fields every JSON line begins with (the final error's line too).
    static func fields(level: Logger.Level, label: String, message: String) -> [JSONValue.Member] {
        [
            .init("time", .string(Timestamp(Date()).iso8601)), .init("level", .string(level.rawValue)),
            .init("label", .string(label)), .init("message", .string(message)),
        ]
    }

    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .stringConvertible(let c): .string(c.description)
        case .array(let a): .array(a.map(json))
        case .dictionary(let d): .object(d.sorted { $0.key < $1.key }.map { .init($0.key, json($0.value)) })
        }
    }
}
