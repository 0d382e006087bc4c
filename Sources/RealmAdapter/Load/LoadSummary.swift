/// What a load did.
public struct LoadSummary: Sendable {
    public struct Table: Sendable {
        public var table: String
        public var what: String
        /// Rows read (link-table rows for a list).
        public var rows: Int
        /// Objects deleted (lists emptied) because the snapshot no longer has them.
        public var deleted: Int
        /// Links set to null, or list elements left out, because their target is missing.
        public var danglingLinks: Int
    }

    public var tables: [Table]
    /// The Realms that received rows.
    public var realms: [String]
    public var duration: Duration
    public var handOffPosition: String?

    public var rows: Int { tables.reduce(0) { $0 + $1.rows } }
}
