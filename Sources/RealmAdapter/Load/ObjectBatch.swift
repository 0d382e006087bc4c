import Synchronization

extension Loader {
    /// Whether the writer merges a type's rows into each Realm (decided at the Realm's first
    /// batch), as the reading thread learns it.
    final class MergeDecisions: Sendable {
        private let decided = Mutex([String: Bool]())
        /// The Realms the store had when the table's load began: any other is new, and the load
        /// only inserts into it (decided at once, so its rows are never kept twice).
        private let existing: Set<String>

        init(existing: Set<String>) { self.existing = existing }

        func merges(_ path: String) -> Bool? {
            decided.withLock { $0[path] } ?? (existing.contains(path) ? nil : false)
        }
        /// Records the writer's decision where the reader does not know it already (a Realm that
        /// was new when the load began takes inserts, unless an app created it since).
        func decide(_ path: String, merges: Bool) {
            guard merges || existing.contains(path) else { return }
            decided.withLock { $0[path] = merges }
        }
    }

    /// One batch of a type's rows, filled on the reading thread (``loadObjects``).
    ///
    /// Rows of a type that can be prepared are checked and encoded for history here
    /// (``PreparedInserts``), so that the writer only stores them, for every Realm the writer
    /// has not decided to merge into. Rows are kept whole as entries too while the writer has
    /// not decided, and for Realms it merges into; once it creates objects in a Realm, its rows
    /// are only prepared, and their values are not kept.
    struct ObjectBatch {
        /// Rows kept whole.
        private(set) var entries: [Entry] = []
        /// Rows checked and encoded ahead, per Realm.
        private(set) var prepared: [String: PreparedInserts] = [:]
        /// The Realms the rows are for, in the order they first came.
        private(set) var paths: [String] = []
        private(set) var count = 0

        private let type: ObjectSchema?
        private let schema: Schema
        private let capacity: Int
        private let decisions: MergeDecisions
        /// The Realm of the latest rows (they come in runs: all of them for a literal path),
        /// whether the writer merges into it, and where its prepared rows are.
        private var current: (path: String, merges: Bool?, prepared: Dictionary<String, PreparedInserts>.Index?)?
        private var seen = Set<String>()

        /// - Parameter type: the type to prepare rows of, or nil if it cannot be (``PreparedInserts/canPrepare(_:)``).
        init(preparing type: ObjectSchema?, schema: Schema, capacity: Int, decisions: MergeDecisions) {
            self.type = type
            self.schema = schema
            self.capacity = capacity
            self.decisions = decisions
            entries.reserveCapacity(capacity)
        }

        mutating func add(_ path: String, _ identity: Value, _ values: PropertyValues) throws {
            try enter(path)
            if let i = current!.prepared { try prepared.values[i].add(identity, values) }
            if current!.merges != false { entries.append(Entry(path: path, identity: identity, values: values)) }
        }

        /// The row `receiver` holds (while it hands it on).
        mutating func add(_ path: String, _ receiver: FieldReceiver) throws {
            try enter(path)
            if let i = current!.prepared { prepared.values[i].add(receiver) }
            if current!.merges != false {
                entries.append(Entry(path: path, identity: receiver.identity, values: receiver.mappedValues))
            }
        }

        /// Counts a row for the Realm at `path`, which becomes ``current``.
        private mutating func enter(_ path: String) throws {
            count += 1
            guard current?.path != path else { return }
            if seen.insert(path).inserted { paths.append(path) }
            let merges = type == nil ? true : decisions.merges(path)
            var index: Dictionary<String, PreparedInserts>.Index?
            if let type, merges != true {
                // Room for the whole batch for its first Realm only: a batch of per-user Realms
                // holds a few rows for each of many, which grow their room as they need it.
                if prepared[path] == nil {
                    prepared[path] = try PreparedInserts(
                        type, schema: schema, capacity: prepared.isEmpty ? capacity : 0)
                }
                index = prepared.index(forKey: path)
            }
            current = (path, merges, index)
        }
    }
}
