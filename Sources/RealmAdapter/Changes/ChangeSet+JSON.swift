extension ChangeSet {
    /// The change set as JSON, as webhooks send it:
    ///
    /// ```json
    /// {"id": "/shop@12", "path": "/shop", "version": 12, "origin": "adapter:postgres",
    ///  "committedAt": "2026-11-23T10:00:00.000000Z",
    ///  "changes": {"Coupon": {"inserted": [{"_identity": "A1", "code": "A1", "status": null}],
    ///                         "modified": [{"identity": "B2", "changed": {"status": {"before": null, "after": "valid"}},
    ///                                       "object": {"_identity": "B2", …}}],
    ///                         "deleted": [{"_identity": "C3", …}], "identityChanges": []}},
    ///  "schemaChanges": []}
    /// ```
    ///
    /// `id` (path and version) is the same for every delivery of one transaction: an idempotency key.
    public var json: JSONValue {
        .object([
            .init("id", .string(id)), .init("path", .string(path)), .init("version", .int(version)),
            .init("origin", .string(origin)), .init("committedAt", .string(committedAt.description)),
            .init("changes", .object(types.map { .init($0.objectType, $0.json) })),
            .init("schemaChanges", .array(schemaChanges.map { $0.json() })),
        ])
    }

    /// `path@version`: names the transaction for good.
    public var id: String { "\(path)@\(version)" }
}

extension TypeChanges {
    var json: JSONValue {
        .object([
            .init("inserted", .array(inserted.map(\.json))),
            .init(
                "modified",
                .array(
                    modified.map { m in
                        .object([
                            .init("identity", m.identity.json),
                            .init(
                                "changed",
                                .object(
                                    m.changes.map {
                                        .init(
                                            $0.name,
                                            .object([.init("before", $0.before.json), .init("after", $0.after.json)]))
                                    })),
                            .init("object", m.object.json),
                        ])
                    })),
            .init("deleted", .array(deleted.map(\.json))),
            .init(
                "identityChanges",
                .array(identityChanges.map { .object([.init("from", $0.from.json), .init("to", $0.to.json)]) })),
        ])
    }
}
