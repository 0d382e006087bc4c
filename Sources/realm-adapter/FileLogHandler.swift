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

/// Appends log lines to a file (the config's `logFile`), one line per message.
struct FileLogHandler: LogHandler {
    private let sink: LineSink
    private let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, sink: LineSink) {
        self.label = label
        self.sink = sink
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

/// Log lines as JSON objects (`--log-format json`): `time`, `level`, `label`, `message`, `source`,
/// then each metadata key as a field (one that would replace these is prefixed `meta.`).
/// Like the text form, it holds what the code logs, which never includes secrets or, at info,
/// row values.
struct JSONLogHandler: LogHandler {
    private let sink: LineSink
    private let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, sink: LineSink) {
        self.label = label
        self.sink = sink
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var members: [JSONValue.Member] = [
            .init("time", .string(Timestamp(Date()).iso8601)), .init("level", .string(event.level.rawValue)),
            .init("label", .string(label)), .init("message", .string("\(event.message)")),
            .init("source", .string(event.source)),
        ]
        let fixed = Set(members.map(\.key))
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for (key, value) in all.sorted(by: { $0.key < $1.key }) {
            members.append(.init(fixed.contains(key) ? "meta." + key : key, Self.json(value)))
        }
        sink.write(JSONValue.object(members).serialized() + "\n")
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
