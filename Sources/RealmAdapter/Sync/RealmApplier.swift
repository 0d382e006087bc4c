/// Applies database transactions to Realms, exactly once (DESIGN 3.3, database → Realm).
///
/// Each transaction is written to all its Realms in one store transaction, together with its
/// source position; a Realm whose recorded position is already at or past it is skipped, so a
/// replay after a crash (the connector confirms a position only after this returns) changes
/// nothing. Writes carry the adapter's origin: the adapter never sends them back.
public struct RealmApplier: Sendable {
    public let store: RealmStore
    public let mapping: Mapping
    /// The origin of the writes: the adapter's, so its own cursor skips them.
    public let origin: String
    /// The name positions are recorded under (the connector's `sourceName`).
    public let source: String

    public init(store: RealmStore, mapping: Mapping, origin: String, source: String) {
        self.store = store
        self.mapping = mapping
        self.origin = origin
        self.source = source
    }

    /// Applies `transaction` and returns the Realm paths it changed.
    ///
    /// - Parameter pending: for a path and the changes bound for it, the Realm writes the
    ///   database does not hold yet as of this transaction; the convergence rule
    ///   (``PendingWrites``) keeps them.
    @discardableResult
    public func apply(_ transaction: DatabaseTransaction,
                      pending: (String, [ObjectChange]) throws -> PendingWrites = { _, _ in .none }) throws -> [String] {
        let groups = try mapping.objectChanges(transaction.changes, paths: { try store.realmPaths() })
        let pendingWrites = pending
        let pending = try groups.filter { group in
            guard let done = try store.sourcePosition(source, of: group.path) else { return true }
            return done < transaction.position
        }
        guard !pending.isEmpty else { return [] }
        let byPath = Dictionary(pending.map { ($0.path, $0.changes) }, uniquingKeysWith: { a, _ in a })
        let waiting = try Dictionary(pending.map { ($0.path, try pendingWrites($0.path, $0.changes)) }, uniquingKeysWith: { a, _ in a })
        try store.write(toEach: pending.map(\.path), origin: origin, sourcePosition: SourcePosition(source: source, position: transaction.position)) { path, tx in
            try ensureSchema(&tx)
            for change in byPath[path]!.compactMap(waiting[path]!.filter) {
                switch change {
                case .upsert(let type, let identity, let values):
                    if try tx.object(type, identity) != nil {
                        try tx.update(type, identity, values)  // records only what changed
                    } else {
                        try tx.create(type, values)
                    }
                case .delete(let type, let identity):
                    if try tx.object(type, identity) != nil { try tx.delete(type, identity) }
                case .clear(let type):
                    try tx.deleteAll(type)
                }
            }
        }
        return pending.map(\.path)
    }

    /// Gives the Realm the configured types and properties it lacks (a new Realm gets them all).
    func ensureSchema(_ tx: inout WriteTransaction) throws {
        for t in mapping.schema.types {
            guard let existing = tx.schema[type: t.name] else { try tx.addType(t); continue }
            let missing = t.properties.filter { existing[property: $0.name] == nil }
            if !missing.isEmpty { try tx.addProperties(missing, to: t.name) }
        }
    }
}
