/// One transaction of a Realm, as an event handler receives it (the legacy event handler's
/// change event): what it changed, and the Realm as of its end.
public struct ChangeEvent: Sendable {
    /// What the transaction changed: per type, the inserted, modified and deleted objects.
    public let changes: ChangeSet
    /// The Realm as it was at the end of this transaction, whatever committed since.
    public let realm: RealmSnapshot
    /// The origin of ``write(_:)``: the handler's own, so its writes do not come back to it.
    public let writeOrigin: String

    public init(changes: ChangeSet, realm: RealmSnapshot, writeOrigin: String) {
        self.changes = changes
        self.realm = realm
        self.writeOrigin = writeOrigin
    }

    /// A write transaction on this event's Realm (as it is now) whose changes do not come back
    /// to the handler as events, unless it sees its own writes: for writing a result back.
    @discardableResult
    public func write<T>(_ body: (inout WriteTransaction) throws -> T) throws -> (result: T, version: Int64) {
        try realm.store.write(to: path, origin: writeOrigin, body)
    }

    public var path: String { changes.path }
    public var version: Int64 { changes.version }
    /// Who wrote the transaction (`adapter:postgres` for database changes, `local`, …).
    public var origin: String { changes.origin }
    public var committedAt: Timestamp { changes.committedAt }
}

/// A change event that failed every attempt and was set aside, so the Realm's later events
/// could go on: `realm-adapter status` lists them.
public struct EventDeadLetter: Sendable, Equatable {
    public var handler: String
    public var path: String
    public var version: Int64
    public var attempts: Int
    /// The handler's (or the endpoint's) last error.
    public var error: String

    static func prefix(_ handler: String) -> String { "events.dead:\(handler):" }

    func record(in store: RealmStore) throws {
        let json = JSONValue.object([
            .init("path", .string(path)), .init("version", .int(version)), .init("attempts", .int(Int64(attempts))),
            .init("error", .string(error)),
        ])
        try store.setMetadata(Self.prefix(handler) + "\(path)@\(version)", json.serialized())
    }

    /// The dead letters of `handler` (an event handler's name), oldest Realm path first.
    public static func all(in store: RealmStore, handler: String) throws -> [EventDeadLetter] {
        try store.metadata(prefix: prefix(handler)).compactMap { _, text in
            guard let json = try? JSONValue(parsing: text), case .string(let path)? = json["path"],
                case .int(let version)? = json["version"], case .int(let attempts)? = json["attempts"],
                case .string(let error)? = json["error"]
            else { return nil }
            return EventDeadLetter(
                handler: handler, path: path, version: version, attempts: Int(attempts), error: error)
        }
        .sorted { ($0.path, $0.version) < ($1.path, $1.version) }
    }
}
