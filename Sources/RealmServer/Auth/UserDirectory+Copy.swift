import RealmAdapter

/// The server's tables, moved with a store (`realm-adapter store copy`).
extension UserDirectory {
    static let copiedTables: [CopiedTable] = [
        CopiedTable(
            "user",
            plain: ["id", "name", "password_hash", "is_admin", "created", "generation", "provider", "email_confirmed"],
            orderedBy: ["id"]),
        CopiedTable("permission", plain: ["path", "user_id", "level"], orderedBy: ["path", "user_id"]),
        CopiedTable("revoked_token", plain: ["id", "expires"], orderedBy: ["id"]),
        CopiedTable("admin_token", plain: ["name", "id", "created"], orderedBy: ["id"]),
        CopiedTable(
            "offer", plain: ["id", "path", "level", "creator_id", "created", "expires", "invalidated"],
            orderedBy: ["id"]),
        CopiedTable(
            "account_token", plain: ["id", "user_id", "purpose", "created", "expires", "used"], orderedBy: ["id"]),
    ]

    /// Throws `invalidState` if any of the server's tables holds a row (a copy's target, before
    /// anything is written to it).
    package func requireEmpty(named name: String) throws {
        try db.read { db in try StoreCopy.requireEmpty(Self.copiedTables, in: db, target: name) }
    }

    /// Copies the users (their password hashes and tokens' generations), path permissions,
    /// revoked and admin tokens, offers and account tokens into `target`, named `name` in
    /// errors, which holds none of them, in one transaction; then checks the counts.
    ///
    /// - Returns: the tables and their numbers of rows.
    @discardableResult
    package func copy(to target: UserDirectory, named name: String, progress: (String, Int) -> Void = { _, _ in })
        throws -> [(table: String, rows: Int)]
    {
        let copy = StoreCopy(from: db) { _ in Self.copiedTables }
        defer { copy.close() }
        try target.db.write(.flushed) { db in
            try StoreCopy.requireEmpty(Self.copiedTables, in: db, target: name)
            try copy.write(into: db, progress: progress)
        }
        return try target.db.read { db in try copy.verify(in: db) }
    }
}
