import Synchronization

extension Mapping {
    /// The mapping extended with what a Realm's schema adds to the configured one (types and
    /// properties the Realm's apps created: `database.applyRealmSchemaChanges`), or nil when it
    /// adds nothing. Types without a primary key cannot be synced and are left out, named in
    /// `skipped`.
    public func adding(realmSchema: Schema) throws -> (mapping: Mapping, added: [String], skipped: [String])? {
        var schema = self.schema
        var added: [String] = []
        var skipped: [String] = []
        for t in realmSchema.types {
            if let existing = schema[type: t.name] {
                let new = t.properties.filter { existing[property: $0.name] == nil }
                guard !new.isEmpty else { continue }
                schema = try schema.adding(properties: new, to: t.name, validate: false)
                added += new.map { "\(t.name).\($0.name)" }
            } else if t.primaryKey == nil {
                skipped.append(t.name)
            } else {
                schema = try schema.adding(t, validate: false)
                added.append(t.name)
            }
        }
        guard !added.isEmpty else { return nil }
        try schema.validate()
        return (try Mapping(schema: schema, mapping: configuration, path: path), added, skipped)
    }
}

/// The mapping both directions of a daemon use, replaced as a whole when Realm schema changes
/// are applied to the database (`database.applyRealmSchemaChanges`).
public final class SharedMapping: Sendable {
    private let value: Mutex<Mapping>
    public init(_ mapping: Mapping) { value = Mutex(mapping) }
    public var current: Mapping { value.withLock { $0 } }
    public func replace(with mapping: Mapping) { value.withLock { $0 = mapping } }
}
