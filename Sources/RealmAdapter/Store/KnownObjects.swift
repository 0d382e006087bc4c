/// Objects a bulk load has found in one Realm, by type, so that its link checks look each
/// target up once per load rather than once per batch (a product is bought again and again).
///
/// Only true while nothing else writes to the Realm: it is stamped with the version the load's
/// last transaction committed, and forgotten when a transaction begins at another version
/// (someone else wrote, and may have deleted an object), on another Realm, or after one that
/// failed. Past ``capacity`` keys it starts again, so memory stays bounded.
final class KnownObjects {
    private var path: String?
    /// The version the Realm was left at by the last transaction that committed; nil while one is open.
    private var version: Int64?
    private var keys: [String: KnownKeys] = [:]
    let capacity: Int

    init(capacity: Int = 1 << 19) { self.capacity = capacity }

    /// A transaction on the Realm at `path` begins, at `version`.
    func begin(_ path: String, at version: Int64) {
        if path != self.path || version != self.version {
            keys = [:]
            self.path = path
        }
        self.version = nil
    }

    /// The transaction begun last committed, leaving the Realm at `path` at `version`.
    func committed(_ path: String, at version: Int64) {
        if path == self.path { self.version = version }
    }

    /// Takes the keys known of `type` out, to be changed and given back (``put(_:_:)``)
    /// without copying them.
    func take(_ type: String) -> KnownKeys { keys.removeValue(forKey: type) ?? KnownKeys() }

    /// Gives back the keys of `type`, all of them found in the Realm in the open transaction or before.
    func put(_ type: String, _ found: KnownKeys) {
        let others = keys.values.reduce(0) { $0 + $1.count }
        if others + found.count > capacity {
            keys = [:]
            if found.count > capacity { return }
        }
        keys[type] = found
    }
}

/// Keys of one type's objects: integers (most keys) apart, as hashing them alone costs a
/// fraction of hashing a ``Value``.
struct KnownKeys {
    private var ints = Set<Int64>()
    private var others = Set<Value>()

    var count: Int { ints.count + others.count }

    func contains(_ key: Value) -> Bool {
        if case .int(let n) = key { ints.contains(n) } else { others.contains(key) }
    }

    mutating func insert(_ key: Value) {
        if case .int(let n) = key { ints.insert(n) } else { others.insert(key) }
    }
}
