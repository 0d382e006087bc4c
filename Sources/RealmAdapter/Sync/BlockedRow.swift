import Foundation

/// A database change no Realm can hold (a row with a value its property cannot take, or a
/// routing value that chooses no Realm) that stopped the daemon while `ignoreSQLErrors` is off:
/// recorded so that `realm-adapter status` can say which and why. The daemon forgets it once it
/// is past the change's position. Kept in the store's metadata, per source.
public struct BlockedRow: Sendable, Equatable {
    /// The position of the database transaction that holds the change.
    public var position: String
    /// The reason, naming table, column and key (as the daemon's log does).
    public var error: String

    public init(position: String, error: String) {
        self.position = position
        self.error = error
    }

    static func key(source: String) -> String { "blocked-row:\(source)" }

    /// Records it for `source` (replacing an older record).
    public func record(in store: RealmStore, source: String) throws {
        let json = JSONValue.object([.init("position", .string(position)), .init("error", .string(error))])
        try store.setMetadata(Self.key(source: source), json.serialized())
    }

    /// The record for `source`, if the store has not got past it since (the daemon, or a load
    /// whose snapshot is later: a probe found `status` naming a row a reload had fixed).
    public static func current(in store: RealmStore, source: String, origin: String? = nil) throws -> BlockedRow? {
        guard let text = try store.metadata(key(source: source)), case let json = try JSONValue(parsing: text),
            case .string(let position)? = json["position"], case .string(let error)? = json["error"]
        else { return nil }
        if let held = try store.latestPosition(from: source, origin: origin), held >= position { return nil }
        return BlockedRow(position: position, error: error)
    }

    /// Forgets the record of `source`.
    public static func clear(in store: RealmStore, source: String) throws {
        try store.setMetadata(key(source: source), nil)
    }
}
