import RealmAdapter

/// The database's own types (domains, enums, arrays of them), read from `pg_type`, so that the
/// loader, the change stream and row reads resolve a column's type the same way, by OID.
///
/// The stream cannot go by name: for a column of a domain, pgoutput's Type message carries the
/// domain's OID but the *base* type's name (`int4` for a domain `year`), so a name lookup misses
/// `customTypes {"year": "int"}`. Resolution: a built-in type as itself; a type whose name is in
/// `customTypes` as that; a domain as its base type; an array as a list of its element's type.
struct PostgresTypeCatalog: Sendable {
    struct Entry: Sendable {
        var name: String
        /// `pg_type.typtype`: `b` base, `d` domain, `e` enum, `c` composite, …
        var kind: UInt8
        /// A domain's base type.
        var base: UInt32
        /// An array's element type.
        var element: UInt32
    }

    var entries: [UInt32: Entry] = [:]

    /// The types outside Postgres's own catalog (the database's domains, enums, arrays of them).
    static func load(_ s: PostgresSession) throws -> PostgresTypeCatalog {
        let rows = try s.query(
            """
            SELECT t.oid::int8, t.typname, t.typtype, t.typbasetype::int8, t.typelem::int8 FROM pg_type t
            JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
            """
        ).rows
        var catalog = PostgresTypeCatalog()
        for r in rows {
            guard let oid = r[0].flatMap(UInt32.init), let name = r[1], let kind = r[2]?.utf8.first,
                let base = r[3].flatMap(UInt32.init), let element = r[4].flatMap(UInt32.init)
            else { continue }
            catalog.entries[oid] = Entry(name: name, kind: kind, base: base, element: element)
        }
        return catalog
    }

    /// The type of a column of type `oid`, or nil when it maps to nothing (an enum or composite
    /// not in `customTypes`). `name` is used only for an OID the catalog does not hold (a type
    /// created after it was read).
    func resolve(oid: UInt32, name: String = "", customTypes: [String: ScalarType]) -> PostgresType? {
        // one lookup: per field
        if let (n, kind) = PostgresType.builtins[oid] { return PostgresType(oid: oid, name: n, kind: kind) }
        guard let e = entries[oid] else { return PostgresType.resolve(oid: oid, name: name, customTypes: customTypes) }
        if let s = customTypes[e.name] { return PostgresType(oid: oid, name: e.name, kind: .scalar(s)) }
        if e.kind == UInt8(ascii: "d") { return resolve(oid: e.base, customTypes: customTypes) }
        if e.element != 0, case .scalar(let s)? = resolve(oid: e.element, customTypes: customTypes)?.kind {
            return PostgresType(oid: oid, name: e.name, kind: .array(s))
        }
        return nil
    }
}
