import RealmAdapter

/// Reads an existing database's tables and writes a starting configuration (`realm-adapter init`).
public enum PostgresIntrospection {
    /// The starting configuration, and one line per table or column it had to leave out.
    ///
    /// Tables become types of the same name; a single-column primary key of int, text or uuid
    /// becomes the primary key; a single-column foreign key to such a key becomes a link; a table
    /// whose primary key is two foreign keys (a join table) becomes a join type with a string
    /// key `"a-b"` and `compoundPrimaryKeys`; arrays become lists of primitives; nullable columns
    /// optional properties. A table with a text `RealmId` column beside its primary key is keyed
    /// by it in the Realm, its primary key becoming the `databasePrimaryKey` (legacy layout).
    /// - Parameter passwordEnv: the environment variable the configuration should read the
    ///   password from, if the database needs one.
    public static func configuration(_ s: PostgresSession, schema: String, url: String?, displayName: String,
                                     passwordEnv: String? = nil) throws -> (JSONValue, [String]) {
        let columns = try s.query("""
            SELECT c.relname, a.attname, t.typname, t.oid::int8, NOT a.attnotnull
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            JOIN pg_type t ON t.oid = a.atttypid
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname NOT LIKE 'realm\\_adapter\\_%'
            ORDER BY c.relname, a.attnum
            """, [schema]).rows
        let constraints = try s.query("""
            SELECT c.relname, k.contype::text, array_to_string(ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                       JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i), ','),
                   coalesce(f.relname, ''),
                   coalesce(array_to_string(ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                       JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i), ','), '')
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_class f ON f.oid = k.confrelid
            WHERE n.nspname = $1 AND k.contype IN ('p', 'f')
            ORDER BY c.relname, k.conname
            """, [schema]).rows

        var tables: [String] = []
        var cols: [String: [(name: String, type: String, oid: UInt32, nullable: Bool)]] = [:]
        for r in columns {
            guard let t = r[0], let c = r[1], let typ = r[2], let oid = r[3].flatMap({ UInt32($0) }) else { continue }
            if cols[t] == nil { tables.append(t) }
            cols[t, default: []].append((c, typ, oid, r[4] == "t"))
        }
        // A partitioned table's key must include its partition key; the Realm's key is the rest.
        let partitionKeys = try s.query("""
            SELECT c.relname, a.attname FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(p.partattrs)
            WHERE n.nspname = $1
            """, [schema]).rows.reduce(into: [String: Set<String>]()) { keys, r in
                if let t = r[0], let c = r[1] { keys[t, default: []].insert(c) }
            }
        var primaryKeys: [String: [String]] = [:]
        var foreignKeys: [String: [String: (table: String, column: String)]] = [:]
        for r in constraints {
            guard let t = r[0], let kind = r[1], let keyCols = r[2]?.split(separator: ",").map(String.init) else { continue }
            if kind == "p" {
                let rest = keyCols.filter { !(partitionKeys[t] ?? []).contains($0) }
                primaryKeys[t] = rest.count == 1 && rest.count < keyCols.count ? rest : keyCols
            }
            if kind == "f", keyCols.count == 1, let target = r[3], let targetCols = r[4]?.split(separator: ","), targetCols.count == 1 {
                foreignKeys[t, default: [:]][keyCols[0]] = (target, String(targetCols[0]))
            }
        }
        let catalog = try PostgresTypeCatalog.load(s)
        var notes: [String] = []
        var types: [JSONValue] = []
        var compound: [JSONValue.Member] = []
        func realmType(_ table: String, _ column: String, _ typ: String, _ oid: UInt32) -> String? {
            guard let t = catalog.resolve(oid: oid, name: typ, customTypes: [:]) else {
                notes.append("\(table).\(column): type \(typ) is not mapped; left out (add it to mapping.customTypes and schema to sync it)")
                return nil
            }
            switch t.kind {
            case .scalar(let s): return s.rawValue
            case .array(let s): return s.rawValue + "[]"
            }
        }
        let keyTypes: Set<String> = ["int", "string", "uuid"]
        for table in tables {
            let pk = primaryKeys[table] ?? []
            let fks = foreignKeys[table] ?? [:]
            var properties: [JSONValue.Member] = []
            let isJoin = pk.count == 2 && pk.allSatisfy { fks[$0] != nil }
            if isJoin {
                properties.append(.init("id", "string"))
                compound.append(.init(table, .array(pk.map { c in
                    let targetKeyType = cols[fks[c]!.table]?.first { $0.name == fks[c]!.column }.flatMap { realmType(table, c, $0.type, $0.oid) } ?? "int"
                    return .object([.init("property", .string(c)), .init("dbColumn", .string(c)), .init("type", .string(targetKeyType))])
                })))
            } else if pk.count != 1 {
                notes.append("\(table): left out, because it has \(pk.isEmpty ? "no primary key" : "a compound primary key that is not two foreign keys"); synced types need one")
                continue
            }
            let realmId = isJoin ? nil : cols[table]?.first { c in
                c.name.lowercased() == "realmid" && c.name != pk[0] && ["text", "varchar", "bpchar"].contains(c.type)
            }?.name
            for c in cols[table] ?? [] {
                if let fk = fks[c.name], let targetPK = primaryKeys[fk.table], targetPK == [fk.column] {
                    properties.append(.init(c.name, .string(fk.table + "?")))
                    continue
                }
                guard var t = realmType(table, c.name, c.type, c.oid) else { continue }
                if !isJoin && c.name == pk.first {
                    guard keyTypes.contains(t) else {
                        notes.append("\(table): left out, because its primary key \(c.name) is \(c.type); keys must be integer, text or uuid")
                        properties = []
                        break
                    }
                    // The database key: objects created in a Realm have none until the database gives them one.
                    if realmId != nil { t += "?" }
                } else if c.name == realmId {
                    t = "string"
                } else if c.nullable && !t.hasSuffix("[]") {
                    t += "?"
                }
                properties.append(.init(c.name, .string(t)))
            }
            guard !properties.isEmpty else { continue }
            var members: [JSONValue.Member] = [.init("name", .string(table)), .init("primaryKey", .string(isJoin ? "id" : realmId ?? pk[0]))]
            if let realmId {
                members.append(.init("databasePrimaryKey", .string(pk[0])))
                notes.append("\(table): keyed by \(realmId) in the Realm, \(pk[0]) is the databasePrimaryKey; it must be generated (IDENTITY or serial) and \(realmId) unique")
            }
            types.append(.object(members + [.init("properties", .object(properties))]))
        }
        // Links to tables that were left out cannot stay.
        let kept = Set(types.compactMap { if case .string(let n)? = $0["name"] { n } else { nil } })
        types = types.map { t in
            guard case .object(var members) = t, case .object(let props)? = t["properties"] else { return t }
            let filtered = props.filter { p in
                guard case .string(let s) = p.value, s.hasSuffix("?"), !ScalarType.allCases.map(\.rawValue).contains(String(s.dropLast())) else { return true }
                if kept.contains(String(s.dropLast())) { return true }
                notes.append("\(members.first?.value ?? .null).\(p.key): a link to \(s.dropLast()), which was left out; dropped")
                return false
            }
            members = members.map { $0.key == "properties" ? .init("properties", .object(filtered)) : $0 }
            return .object(members)
        }
        var database: [JSONValue.Member] = [.init("type", "postgres")]
        if let url { database.append(.init("url", .string(url))) }
        // Slots and publications are per server and per database: names of this database's own.
        let own = Self.ownName(for: displayName)
        database += [.init("slotName", .string(own)), .init("publication", .string(own))]
        if let passwordEnv { database.append(.init("passwordEnv", .string(passwordEnv))) }
        if schema != "public" { database.append(.init("schema", .string(schema))) }
        var config: [JSONValue.Member] = [
            .init("realm", .object([.init("store", "./realms"), .init("path", .string("/" + displayName))])),
            .init("database", .object(database)),
            .init("schema", .array(types)),
        ]
        if !compound.isEmpty { config.append(.init("mapping", .object([.init("compoundPrimaryKeys", .object(compound))]))) }
        return (.object(config), notes)
    }

    /// `realm_adapter_<database>` as a valid slot name: lower-case letters, digits and
    /// underscores, at most 63 bytes.
    static func ownName(for database: String) -> String {
        let safe = String(decoding: database.lowercased().utf8.map { c in
            (97...122).contains(c) || (48...57).contains(c) ? c : UInt8(ascii: "_")
        }, as: UTF8.self)
        return String(("realm_adapter_" + safe).prefix(63))
    }
}
