/// The rules of `realm-adapter init`: a starting configuration from an existing database's
/// tables, the same for every database (each connector only describes its tables).
///
/// Tables become types of the same name; a single-column primary key of int, text or uuid
/// becomes the primary key; a single-column foreign key to such a key becomes a link; a table
/// whose primary key is two foreign keys (a join table) becomes a join type with a string key
/// `"a-b"` and `compoundPrimaryKeys`; arrays become lists of primitives; nullable columns
/// optional properties. A table with a text `RealmId` column beside its primary key is keyed by
/// it in the Realm, its primary key becoming the `databasePrimaryKey` (legacy layout); so is a
/// table whose key the database generates and refuses to be given (an `IDENTITY`), with a note
/// to add the `RealmId` column. Links to
/// tables that were left out are dropped. Each table or column left out gets a note.
public struct StartingConfiguration: Sendable {
    /// The configuration, ready to be written as JSON.
    public var json: JSONValue
    /// One line per table or column left out, or worth checking.
    public var notes: [String]

    /// Key types a Realm primary key can have, as `init` maps them.
    static let keyTypes: Set<String> = ["int", "string", "uuid"]

    /// - Parameters:
    ///   - url: the connection URL to write (without its password).
    ///   - passwordEnv: the environment variable the configuration reads the password from, if
    ///     the database needs one.
    public init(_ d: DatabaseDescription, factory: any ConnectorFactory, url: String?, passwordEnv: String?) {
        var notes: [String] = []
        var types: [JSONValue] = []
        var compound: [JSONValue.Member] = []
        for table in d.tables {
            guard let type = Self.objectType(table, in: d, compound: &compound, notes: &notes) else { continue }
            types.append(type)
        }
        types = Self.droppingLinksToLeftOutTypes(types, notes: &notes)
        var database: [JSONValue.Member] = [.init("type", .string(factory.type))]
        if let url, factory.needsServer { database.append(.init("url", .string(url))) }
        database += factory.startingSettings(for: d)
        if let passwordEnv { database.append(.init("passwordEnv", .string(passwordEnv))) }
        if d.schema != factory.defaultSchema { database.append(.init("schema", .string(d.schema))) }
        var config: [JSONValue.Member] = [
            .init("realm", .object([.init("store", "./realms"), .init("path", .string("/" + d.name))])),
            .init("database", .object(database)),
            .init("schema", .array(types)),
        ]
        if !compound.isEmpty {
            config.append(.init("mapping", .object([.init("compoundPrimaryKeys", .object(compound))])))
        }
        self.json = .object(config)
        self.notes = notes
    }

    /// The Realm key of a table: its primary key without the columns it holds only for
    /// partitioning, when one column remains.
    static func key(_ t: DatabaseDescription.Table) -> [String] {
        let rest = t.primaryKey.filter { !t.partitionColumns.contains($0) }
        return rest.count == 1 && rest.count < t.primaryKey.count ? rest : t.primaryKey
    }

    /// The Realm JS type of a column, or nil (with a note) when no Realm type holds it.
    static func realmType(_ table: String, _ c: DatabaseDescription.Column, notes: inout [String]) -> String? {
        switch c.type {
        case .scalar(let s)?: return s.rawValue
        case .array(let s)?: return s.rawValue + "[]"
        case nil:
            notes.append(
                "\(table).\(c.name): type \(c.databaseType) is not mapped; left out "
                    + "(add it to mapping.customTypes and schema to sync it)")
            return nil
        }
    }

    /// A foreign key that makes a link: to a table keyed by the referenced column alone.
    static func link(_ column: String, of t: DatabaseDescription.Table, in d: DatabaseDescription) -> String? {
        guard let fk = t.foreignKeys.first(where: { $0.column == column }),
            let target = d.table(fk.table), key(target) == [fk.referencedColumn]
        else { return nil }
        return fk.table
    }

    static func objectType(
        _ t: DatabaseDescription.Table, in d: DatabaseDescription, compound: inout [JSONValue.Member],
        notes: inout [String]
    ) -> JSONValue? {
        let pk = key(t)
        let fks = Dictionary(t.foreignKeys.map { ($0.column, $0) }, uniquingKeysWith: { a, _ in a })
        var properties: [JSONValue.Member] = []
        let isJoin = pk.count == 2 && pk.allSatisfy { fks[$0] != nil }
        if isJoin {
            properties.append(.init("id", "string"))
            compound.append(
                .init(
                    t.name,
                    .array(
                        pk.map { c in
                            let fk = fks[c]!
                            let targetKey = d.table(fk.table)?.column(fk.referencedColumn)
                            let type = targetKey.flatMap { realmType(t.name, $0, notes: &notes) } ?? "int"
                            return .object([
                                .init("property", .string(c)), .init("dbColumn", .string(c)),
                                .init("type", .string(type)),
                            ])
                        })))
        } else if pk.count != 1 {
            let why = pk.isEmpty ? "no primary key" : "a compound primary key that is not two foreign keys"
            notes.append("\(t.name): left out, because it has \(why); synced types need one")
            return nil
        }
        var realmId =
            isJoin
            ? nil
            : t.columns.first { c in
                c.name.lowercased() == "realmid" && c.name != pk[0] && c.isText
            }?.name
        // A key the database refuses to be given (an IDENTITY) cannot be chosen by a Realm: as the
        // legacy connector did, a RealmId string keys the Realm, and the table needs that column.
        let needsRealmId =
            !isJoin && realmId == nil && t.column(pk[0])?.refusesGivenValues == true
            && !t.columns.contains { $0.name.lowercased() == "realmid" }
        if needsRealmId {
            realmId = "RealmId"
            properties.append(.init("RealmId", "string"))
        }
        for c in t.columns {
            if let target = link(c.name, of: t, in: d) {
                properties.append(.init(c.name, .string(target + "?")))
                continue
            }
            guard var type = realmType(t.name, c, notes: &notes) else { continue }
            if !isJoin && c.name == pk.first {
                guard keyTypes.contains(type) else {
                    notes.append(
                        "\(t.name): left out, because its primary key \(c.name) is \(c.databaseType); "
                            + "keys must be integer, text or uuid")
                    return nil
                }
                // The database key: objects created in a Realm have none until the database gives them one.
                if realmId != nil { type += "?" }
            } else if c.name == realmId {
                type = "string"
            } else if c.isNullable && !type.hasSuffix("[]") {
                type += "?"
            }
            properties.append(.init(c.name, .string(type)))
        }
        guard !properties.isEmpty else { return nil }
        var members: [JSONValue.Member] = [
            .init("name", .string(t.name)), .init("primaryKey", .string(isJoin ? "id" : realmId ?? pk[0])),
        ]
        if let realmId {
            members.append(.init("databasePrimaryKey", .string(pk[0])))
            var note =
                "\(t.name): keyed by \(realmId) in the Realm, \(pk[0]) is the databasePrimaryKey; "
                + "it must be generated (IDENTITY or serial) and \(realmId) unique"
            if needsRealmId {
                note =
                    "\(t.name): its key \(pk[0]) is an IDENTITY the database generates and refuses to be given, so "
                    + "a Realm cannot choose it: keyed by a RealmId string in the Realm, \(pk[0]) is the "
                    + "databasePrimaryKey. Add the column first: a text RealmId (up to 450 characters), unique where "
                    + "set (createSchema does not change an existing table)"
            } else if t.column(pk[0])?.isGenerated == false {
                note +=
                    "; \(pk[0]) is not generated now: give it an identity or a default, or rows created in a Realm "
                    + "cannot be inserted"
            }
            notes.append(note)
        }
        return .object(members + [.init("properties", .object(properties))])
    }

    /// Links to types that were left out cannot stay.
    static func droppingLinksToLeftOutTypes(_ types: [JSONValue], notes: inout [String]) -> [JSONValue] {
        let kept = Set(types.compactMap { if case .string(let n)? = $0["name"] { n } else { nil } })
        let scalars = Set(ScalarType.allCases.map(\.rawValue))
        return types.map { t in
            guard case .object(var members) = t, case .object(let props)? = t["properties"],
                case .string(let name)? = t["name"]
            else { return t }
            let filtered = props.filter { p in
                guard case .string(let s) = p.value, s.hasSuffix("?"), !scalars.contains(String(s.dropLast())) else {
                    return true
                }
                if kept.contains(String(s.dropLast())) { return true }
                notes.append("\(name).\(p.key): a link to \(s.dropLast()), which was left out; dropped")
                return false
            }
            members = members.map { $0.key == "properties" ? .init("properties", .object(filtered)) : $0 }
            return .object(members)
        }
    }
}
