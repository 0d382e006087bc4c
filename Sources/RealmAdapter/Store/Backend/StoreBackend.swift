/// The database a ``RealmStore`` keeps its Realms in: transactions over ``StoreConnection``s.
///
/// A backend owns its driver and dialect; what the tables mean is the store's, written once
/// above every backend. Errors of the database are thrown as ``StoreError``; errors thrown by a
/// body pass through unchanged, after its transaction is rolled back.
package protocol StoreBackend: Sendable {
    /// The engine, as `status` and the metrics name it: `sqlite`, `postgres`.
    var engine: String { get }
    /// Runs `body` in one consistent snapshot of the store.
    ///
    /// A backend may find its connection broken only at `body`'s first statement (Postgres sends
    /// the BEGIN with it) and run `body` again on a new one: a body sends its first statement
    /// before anything else it does outlives it, and does not swallow that statement's error.
    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T
    /// Runs `body` in a write transaction, serialized with every other writer of the store in
    /// any process, and commits it when `body` returns. The same holds of a body as for ``read(_:)``.
    func write<T>(_ durability: StoreDurability, _ body: (any StoreConnection) throws -> T) throws -> T
    /// Runs `body` on the connection that writes, outside any transaction: for what lives as
    /// long as that connection (a load's notes in a temporary table).
    func onWriter<T>(_ body: (any StoreConnection) throws -> T) throws -> T
    /// A new probe that tells whether anything was committed since it was last asked.
    func makeCommitProbe() -> any StoreCommitProbe
    /// Takes the store-wide lock `name` (letters, digits, `-`, `_`, `.`, `%`) for as long as
    /// the returned value lives, and for no longer than this process: nil when another holds it.
    func exclusiveLock(_ name: String) throws -> (any StoreLock)?
}

/// A lock of ``StoreBackend/exclusiveLock(_:)``, released when the value goes away.
package protocol StoreLock: AnyObject, Sendable {}

extension StoreBackend {
    /// A write transaction as the store was opened.
    package func write<T>(_ body: (any StoreConnection) throws -> T) throws -> T { try write(.asOpened, body) }
}

/// When a write transaction's commit reaches the disk.
package enum StoreDurability: Sendable {
    /// As the store was opened (``RealmStore/Options/durable``).
    case asOpened
    /// Before the commit returns, even in a store opened as not durable: every commit before it
    /// is then on disk too (a loader's closing mark covers its whole load).
    case flushed
    /// Not by this commit (a later durable one flushes it): for state another record restores
    /// after a power loss, such as an adapter's cursor whose target records what it applied.
    case deferred
}

/// Whether anything was committed to the store, by any process, since the last time it was
/// asked: a poll that finds nothing reads nothing else.
package protocol StoreCommitProbe: Sendable {
    /// True when something was committed since the last call, on the first call, and when it
    /// cannot tell.
    func committedSinceLastCheck() -> Bool
}
