import Foundation

/// A Realm transaction the database rejected while `ignoreSQLErrors` is off: the daemon stops
/// with it unsent (nothing lost, retried on the next start), and records it here so that
/// `realm-adapter status` can say which one and why, and `realm-adapter dead-letter` can move
/// it aside. Kept in the store's metadata, per adapter and Realm.
public struct BlockedTransaction: Sendable, Equatable {
    public var path: String
    public var version: Int64
    /// The database's error (its message, SQLSTATE and hint; no row values).
    public var error: String

    public init(path: String, version: Int64, error: String) {
        self.path = path
        self.version = version
        self.error = error
    }

    static func key(adapter: String, path: String) -> String { "blocked:\(adapter):\(path)" }

    /// Records it for `adapter` (replacing an older record of the same Realm).
    public func record(in store: RealmStore, adapter: String) throws {
        let json = JSONValue.object([.init("version", .int(version)), .init("error", .string(error))])
        try store.setMetadata(Self.key(adapter: adapter, path: path), json.serialized())
    }

    /// What blocks `adapter` at `path` now: the record, if it names the oldest transaction the
    /// adapter has still to send (a record the daemon got past since is stale and ignored).
    public static func current(in store: RealmStore, adapter: Adapter, path: String) throws -> BlockedTransaction? {
        guard let text = try store.metadata(key(adapter: adapter.name, path: path)),
            case .int(let version)? = try JSONValue(parsing: text)["version"],
            try adapter.pending(path, limit: 1).first?.version == version
        else { return nil }
        guard case .string(let error)? = try JSONValue(parsing: text)["error"] else { return nil }
        return BlockedTransaction(path: path, version: version, error: error)
    }

    /// Forgets the record of `adapter` at `path`.
    public static func clear(in store: RealmStore, adapter: String, path: String) throws {
        try store.setMetadata(key(adapter: adapter, path: path), nil)
    }
}
