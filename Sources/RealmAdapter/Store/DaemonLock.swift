import Foundation

/// One daemon (or load) per adapter and store: an exclusive lock of the store's backend (a file
/// lock in the store's directory, an advisory lock of the store's Postgres database), held while
/// the daemon or the load runs and released when its process ends, however it ends.
///
/// Two daemons of one adapter on one store (each with its own replication slot, say) would each
/// send every Realm change to the database, and each apply the database's changes once more; a
/// load beside a daemon (one that is reconnecting, whose slot is idle) would set where its stream
/// starts while it streams.
public final class DaemonLock: Sendable {
    private let lock: any StoreLock

    /// Takes the lock for `adapter` in `store`, or throws if another process holds it.
    public init(store: RealmStore, adapter: String) throws {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
        let name = adapter.addingPercentEncoding(withAllowedCharacters: allowed) ?? "adapter"
        guard let lock = try store.backend.exclusiveLock("daemon-\(name)") else {
            throw RealmAdapterError.daemonRunning(adapter: adapter, store: store.directory)
        }
        self.lock = lock
    }

    /// The lock for a load, refused with what to do while a daemon (or another load) holds it.
    public static func forLoad(store: RealmStore, adapter: String) throws -> DaemonLock {
        do {
            return try DaemonLock(store: store, adapter: adapter)
        } catch let e as RealmAdapterError where e.code == .invalidState {
            throw RealmAdapterError.loadBesideDaemon(adapter: adapter, store: store.directory)
        }
    }

    /// The lock for a store copy, refused with what to stop while a daemon (or a load) holds it.
    static func forCopy(store: RealmStore, adapter: String) throws -> DaemonLock {
        do {
            return try DaemonLock(store: store, adapter: adapter)
        } catch let e as RealmAdapterError where e.code == .invalidState {
            throw RealmAdapterError.copyBesideDaemon(adapter: adapter, store: store.directory)
        }
    }
}

extension RealmAdapterError {
    static func daemonRunning(adapter: String, store: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "Another realm-adapter daemon is running adapter '\(adapter)' on the store \(store) (or a load is): "
                + "stop it before starting this one (two would each send every Realm change to the database).",
            context: ["store": store, "adapter": adapter])
    }

    static func loadBesideDaemon(adapter: String, store: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "A realm-adapter daemon (or another load) is running adapter '\(adapter)' on the store \(store): stop "
                + "`realm-adapter run` before loading (a load sets where the daemon's stream starts).",
            context: ["store": store, "adapter": adapter])
    }

    static func daemonLockUnavailable(_ file: String, errno: Int32) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable,
            "Cannot open the daemon's lock file \(file): \(String(cString: strerror(errno))). Check that the "
                + "store directory is writable by this user.", context: ["file": file])
    }
}
