import Foundation

/// A change to one object, as the database side asks for it.
public enum ObjectChange: Hashable, Sendable {
    /// Create the object, or update the given properties of an existing one.
    case upsert(type: String, identity: Value, values: PropertyValues)
    case delete(type: String, identity: Value)
    /// Delete every object of the type.
    case clear(type: String)
    /// A list of links changed in the database (a link-table row was inserted, updated or
    /// deleted): the Realm's list becomes the database's rows in index order.
    case listChanged(type: String, identity: Value, property: String)
    /// Set the given properties of the object if the Realm has it (the database key the
    /// database gave an object created in a Realm).
    case update(type: String, identity: Value, values: PropertyValues)
}

/// Object changes grouped by Realm path: paths in first-seen order, each path's changes in order.
struct ChangesByPath {
    private var paths: [String] = []
    private var changes: [String: [ObjectChange]] = [:]

    init(_ groups: [(path: String, changes: [ObjectChange])] = []) { add(groups) }

    mutating func add(_ groups: [(path: String, changes: [ObjectChange])]) {
        for (path, changes) in groups { for c in changes { add(path, c) } }
    }

    mutating func add(_ path: String, _ change: ObjectChange) {
        if changes[path] == nil { paths.append(path) }
        changes[path, default: []].append(change)
    }

    var groups: [(path: String, changes: [ObjectChange])] { paths.map { ($0, changes[$0]!) } }
}

extension Mapping {
    /// The object changes of a database transaction, grouped by Realm path in first-seen order,
    /// each group in commit order. Rows of unmapped tables are skipped.
    ///
    /// - Parameter paths: the Realms a truncate must clear when rows are routed by a template.
    /// - Parameter row: a row as the database holds it now (table, key columns, wanted columns),
    ///   or nil if it has none: with a template, a link-table row's owner tells its Realm.
    /// - Parameter keys: for types with a database key: finds objects by it, and collects the
    ///   RealmIds generated for rows without one (to be written back).
    /// - Throws: `invalidValue` naming table, column and key for a value that does not convert.
    package func objectChanges(
        _ changes: [RowChange], paths: () throws -> [String],
        row: (String, DatabaseRow, [String]) throws -> DatabaseRow? = { _, _, _ in nil },
        keys: DatabaseKeyResolver = DatabaseKeyResolver(),
        setAside: ((RowChange, RealmAdapterError) throws -> Void)? = nil
    ) throws -> [(path: String, changes: [ObjectChange])] {
        var grouped = ChangesByPath()
        var one: [(String, ObjectChange)] = []  // reused: one buffer for every row change
        for change in changes {
            // One change at a time, so that a change set aside leaves nothing half-added.
            one.removeAll(keepingCapacity: true)
            do {
                try objectChanges(of: change, into: &one, paths: paths, row: row, keys: keys)
            } catch let e as RealmAdapterError where setAside != nil && e.code == .invalidValue {
                try setAside?(change, e)
                continue
            }
            for (path, c) in one { grouped.add(path, c) }
        }
        return grouped.groups
    }

    /// The object changes of one row change, appended to `out` with their Realm paths.
    private func objectChanges(
        of change: RowChange, into out: inout [(String, ObjectChange)], paths: () throws -> [String],
        row: (String, DatabaseRow, [String]) throws -> DatabaseRow?, keys: DatabaseKeyResolver
    ) throws {
        func add(_ path: String, _ c: ObjectChange) { out.append((path, c)) }
        if let (owner, list) = change.tables.count == 1 ? linkList(named: change.tables[0]) : nil {
            for c in try linkChanges(change, owner, list) {
                guard case .listChanged(let type, let key, let property) = c else { continue }
                var p = path.template
                if !path.isLiteral {
                    // The list lives in its owner's Realm; an owner the database no longer has has none.
                    let ownerKey =
                        owner.compoundKey == nil ? DatabaseRow([owner.referencedColumn: key]) : try keyRow(owner, key)
                    guard let ownerRow = try row(owner.table, ownerKey, path.fields) else { continue }
                    p = try route(ownerRow, owner)
                }
                // A link table holds database keys where the owner has one.
                let identity = owner.databaseKey == nil ? key : try keys.link(key, to: owner, path: p)
                add(p, .listChanged(type: type, identity: identity, property: property))
            }
            return
        }
        switch change {
        case .insert(let table, let row):
            guard let t = self.table(named: table) else { return }
            try requireReadable(row, t)
            let path = try route(row, t)
            let (identity, values) = try object(row, t, path: path, keys: keys)
            add(path, .upsert(type: t.type.name, identity: identity, values: values))
        case .update(let table, let row, let old):
            guard let t = self.table(named: table) else { return }
            try requireReadable(row, t)
            let path = try route(row, t)
            let (identity, values) = try object(row, t, path: path, keys: keys)
            var moved = false
            if let old,
                t.keyColumns.allSatisfy({ old[$0] != nil }) || t.databaseKey.map({ old[$0.column] != nil }) == true
            {
                // The key or the routing columns changed: the object moves.
                // The old row carries the routing columns only under REPLICA IDENTITY FULL. One
                // that chose no Realm (a routing value none can hold, its row set aside) left none.
                if let oldPath = self.path.fields.allSatisfy({ old[$0] != nil }) ? try? route(old, t) : path {
                    // With a database key, the object the old row names is the one the Realm has with it.
                    let oldIdentity =
                        try t.databaseKey.map { try keys.existingIdentity(old, t, $0, path: oldPath) } ?? key(old, t)
                    if let oldIdentity, oldIdentity != identity || oldPath != path {
                        add(oldPath, .delete(type: t.type.name, identity: oldIdentity))
                        moved = oldPath != path
                    }
                }
            }
            add(path, .upsert(type: t.type.name, identity: identity, values: values))
            // Into another Realm, its lists of links come along: their link-table rows did not change,
            // so the stream carries none of them (a probe saw the list empty in the new Realm).
            if moved {
                for l in t.linkLists {
                    add(path, .listChanged(type: t.type.name, identity: identity, property: l.property.name))
                }
            }
        case .delete(let table, let key):
            guard let t = self.table(named: table) else { return }
            try requireReadable(key, t)
            let path = try route(key, t)
            // A row found by its database key only: the object the Realm has with it, if any.
            guard
                let identity = try t.databaseKey.map({ try keys.existingIdentity(key, t, $0, path: path) })
                    ?? self.key(key, t)
            else { return }
            add(path, .delete(type: t.type.name, identity: identity))
        case .truncate(let tables):
            let types = tables.compactMap { self.table(named: $0)?.type.name }
            guard !types.isEmpty else { return }
            let targets = path.isLiteral ? [path.template] : try paths().filter { path.extract($0) != nil }
            for p in targets { for type in types { add(p, .clear(type: type)) } }
        }
    }

    /// What the adapter's own database transaction (the Realm → database direction's writes)
    /// brings back to the Realms: the database keys the database generated for rows it inserted
    /// for objects created in a Realm. Nothing else of it travels back.
    public func databaseKeyFills(_ changes: [RowChange]) throws -> [(path: String, changes: [ObjectChange])] {
        var grouped = ChangesByPath()
        for case .insert(let table, let row) in changes {
            guard let t = self.table(named: table), let dk = t.databaseKey,
                let dbKey = row[dk.column], !dbKey.isNull, let id = row[t.keyColumn], !id.isNull
            else { continue }
            grouped.add(
                try route(row, t),
                .update(
                    type: t.type.name, identity: try key(row, t),
                    values: [dk.property: try t.columns[dk.index].realmValue(dbKey)]))
        }
        return grouped.groups
    }

    /// A link-table row change as the lists it changes. Positions are not taken from the rows: after rows are removed from the middle, the
    /// database's indexes no longer count from 0, so the list is read back in index order.
    func linkChanges(_ change: RowChange, _ owner: TableMapping, _ list: LinkListMapping) throws -> [ObjectChange] {
        func ownerKey(_ row: DatabaseRow) throws -> Value? {
            guard let o = row[LinkListMapping.ownerColumn], !o.isNull else { return nil }
            return try o.coerced(to: list.ownerKeyType, optional: false)
        }
        var owners: [Value] = []
        switch change {
        case .insert(_, let row): owners = [try ownerKey(row)].compactMap { $0 }
        case .update(_, let row, let old): owners = [try ownerKey(row), try old.flatMap(ownerKey)].compactMap { $0 }
        case .delete(_, let key): owners = [try ownerKey(key)].compactMap { $0 }
        case .truncate: owners = []
        }
        var seen = Set<Value>()
        return owners.filter { seen.insert($0).inserted }.map {
            .listChanged(type: owner.type.name, identity: $0, property: list.property.name)
        }
    }

    /// The Realm path of a row: the literal path, or the template filled from the row.
    func route(_ row: some ColumnValues, _ t: TableMapping) throws -> String {
        if path.isLiteral { return path.template }
        guard let p = path.render({ field in row.value(column: field).flatMap(Self.pathText) }) else {
            let reasons = path.fields.compactMap { field -> String? in
                guard let v = row.value(column: field), !v.isNull, let text = Self.pathText(v) else {
                    return
                        "column \(field) is null or not carried (a delete carries only the key unless the "
                        + "table has REPLICA IDENTITY FULL)"
                }
                if text.isEmpty { return "column \(field) is empty" }
                return text.contains("/") ? "column \(field) contains '/', which would make a different path" : nil
            }
            throw RealmAdapterError.unroutable(
                table: t.table, key: try? self.key(row, t), template: "\(path)", fields: path.fields, reasons: reasons)
        }
        guard RealmPath.isNFC(p) else {
            let reasons = path.fields.compactMap { field -> String? in
                guard let text = row.value(column: field).flatMap(Self.pathText), !RealmPath.isNFC(text) else {
                    return nil
                }
                return
                    "column \(field) is not in Unicode normalization form C (NFC): text that looks the same, such as "
                    + "\"café\" written with a separate accent, would choose another Realm"
            }
            throw RealmAdapterError.unroutable(
                table: t.table, key: try? self.key(row, t), template: "\(path)", fields: path.fields,
                reasons: reasons.isEmpty ? ["the template is not in Unicode normalization form C (NFC)"] : reasons)
        }
        // A value the store would refuse as a path ('..', a control character, too long) is this
        // row's fault, not the daemon's: said without the value.
        if let why = RealmPath.problem(p) {
            throw RealmAdapterError.unroutable(
                table: t.table, key: try? self.key(row, t), template: "\(path)", fields: path.fields,
                reasons: [
                    (path.fields.count == 1
                        ? "column \(path.fields[0]) makes" : "columns \(path.fields.joined(separator: ", ")) make")
                        + " a path that is no Realm path: \(why)"
                ])
        }
        return p
    }

    static func pathText(_ v: Value) -> String? {
        switch v {
        case .null: nil
        case .string(let s): s
        case .uuid(let u): u.text
        default: v.description
        }
    }

    func key(_ row: some ColumnValues, _ t: TableMapping) throws -> Value {
        if let parts = t.compoundKey {
            // A join object's key: its parts joined by "-" (legacy: "2-3").
            let texts = try parts.map { part -> String in
                guard let v = row.value(column: part.dbColumn), let text = Self.pathText(v) else {
                    throw RealmAdapterError.noKeyValue(table: t.table, column: part.dbColumn)
                }
                // ("a-b", "c") and ("a", "b-c") would be one object, the later overwriting the other.
                // A uuid part is told by its shape (8-4-4-4-12 hex digits), so its own "-" are no
                // harm; it is spelt one way (lower case), however the database prints it (SQL
                // Server: upper case), or the Realm's "…-b0ee…" and the row's "…-B0EE…" were two objects.
                if part.type == .uuid {
                    guard let u = UUID(uuidString: text) else {
                        throw RealmAdapterError.separatorInKeyPart(table: t.table, column: part.dbColumn)
                    }
                    return u.text
                }
                guard !text.contains(TableMapping.compoundKeySeparator) else {
                    throw RealmAdapterError.separatorInKeyPart(table: t.table, column: part.dbColumn)
                }
                return text
            }
            return .string(texts.joined(separator: TableMapping.compoundKeySeparator))
        }
        return try key(t.keyColumnIndex.flatMap { row.value(at: $0, of: t) }, t)
    }

    /// Throws, for a row with a mapped column whose value the connector could not read
    /// (``DatabaseRow/unreadable``), why, naming table, column and key: the row is a bad row.
    func requireReadable(_ row: DatabaseRow, _ t: TableMapping) throws {
        guard !row.unreadable.isEmpty else { return }
        for column in t.columns.map(\.column) + t.pathColumns {
            guard let reason = row.unreadable[column] else { continue }
            let identity = t.keyColumns.contains { row.unreadable[$0] != nil } ? nil : try? key(row, t)
            throw RealmAdapterError.invalidValue(reason).inColumn(table: t.table, column: column, key: identity)
        }
    }

    /// The identity a row's key column value `v` gives (a type without a join key).
    func key(_ v: Value?, _ t: TableMapping) throws -> Value {
        guard let i = t.keyColumnIndex, let v, !v.isNull else {
            throw RealmAdapterError.noKeyValue(table: t.table, column: t.keyColumn)
        }
        do { return try t.columns[i].realmValue(v) } catch let e as RealmAdapterError {
            throw e.inColumn(table: t.table, column: t.keyColumn)
        }
    }

    /// ``object(_:_:skipping:identity:)`` for a row bound for the Realm at `path`, with database
    /// keys turned into identities and links (`keys`).
    func object(_ row: some ColumnValues, _ t: TableMapping, path: String, keys: DatabaseKeyResolver) throws -> (
        Value, PropertyValues
    ) {
        var identity: Value?
        if let dk = t.databaseKey {
            guard let id = try keys.identity(row, t, dk, path: path) else {
                throw RealmAdapterError.noKeyValue(table: t.table, column: dk.column, what: "database key")
            }
            identity = id
        }
        var (id, values) = try object(row, t, identity: identity)
        try resolveLinks(&values, t, path: path, keys: keys)
        return (id, values)
    }

    /// Turns the database keys that links into types with a database key hold into the targets' identities.
    func resolveLinks(_ values: inout PropertyValues, _ t: TableMapping, path: String, keys: DatabaseKeyResolver) throws
    {
        guard let links = linksByDatabaseKey[t.type.name] else { return }
        for (i, e) in values.enumerated() where !e.value.isNull {
            guard let target = links[e.name] else { continue }
            values.setValue(try keys.link(e.value, to: tables[target], path: path), at: i)
        }
    }

    /// The identity and the values a row gives its object (columns the change did not carry are left out).
    ///
    /// - Parameter skipping: properties to leave out (the loader sets links into types loaded later in a second pass).
    /// - Parameter identity: the identity, when the caller found it (a type with a database key);
    ///   it is then the primary key's value too.
    func object(_ row: some ColumnValues, _ t: TableMapping, skipping: Set<String> = [], identity given: Value? = nil)
        throws -> (Value, PropertyValues)
    {
        var values = PropertyValues()
        values.reserveCapacity(t.columns.count + 1)
        let identity = try object(row, t, skipping: skipping, identity: given, into: &values)
        return (identity, values)
    }

    /// The same, into `values` (emptied first): a bulk load reuses one buffer for every row.
    func object(
        _ row: some ColumnValues, _ t: TableMapping, skipping: Set<String> = [], identity given: Value? = nil,
        into values: inout PropertyValues
    ) throws -> Value {
        let identity = try given ?? key(row, t)
        values.removeAll(keepingCapacity: true)
        if t.compoundKey != nil, let pk = t.type.primaryKey { values.append(pk, identity) }
        // With the identity given, the key column's value is the identity.
        let givenKey = given == nil ? nil : t.keyColumnIndex
        let names = t.propertyNames
        let plainScalars = t.plainScalars
        for i in names.indices {
            guard let v = row.value(at: i, of: t) else { continue }
            if !skipping.isEmpty && skipping.contains(names[i]) { continue }
            if i == givenKey {
                values.append(names[i], identity)
                continue
            }
            if let s = plainScalars[i], v.has(s) {
                values.append(names[i], v)
                continue
            }
            values.append(names[i], try realmValue(v, column: i, t, key: identity))
        }
        return identity
    }

    /// What `v`, the value of `t.columns[i]` in the row of an object with key `identity`, gives
    /// the column's property.
    func realmValue(_ v: Value, column i: Int, _ t: TableMapping, key identity: Value) throws -> Value {
        if let s = t.plainScalars[i], v.has(s) { return v }
        let c = t.columns[i]
        do {
            return try c.realmValue(v)
        } catch let e as RealmAdapterError {
            throw e.inColumn(table: t.table, column: c.column, key: identity)
        }
    }

    /// A row key for messages: numbers as they are; text keys stay out of logs (they may be data).
    static func keyText(_ identity: Value) -> String {
        identity.kindName == "string" ? "(text key)" : identity.description
    }
}

/// The column values of one row, as the mapping reads them.
public protocol ColumnValues {
    /// The value of a column by name (nil: not carried).
    func value(column: String) -> Value?
    /// The value of `t.columns[index]` (nil: not carried, e.g. an unchanged TOAST value).
    func value(at index: Int, of t: TableMapping) -> Value?
}

extension DatabaseRow: ColumnValues {
    public func value(column: String) -> Value? { values[column] }
    public func value(at index: Int, of t: TableMapping) -> Value? {
        let column = t.columns[index].column
        return missing.contains(column) ? nil : values[column]
    }
}
