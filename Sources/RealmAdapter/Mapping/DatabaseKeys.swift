import Crypto
import Foundation

/// A type's database key when the database keeps its own (`databasePrimaryKey`, legacy
/// `sqlserverPrimaryKey`): e.g. `PersonId`, an IDENTITY or serial column, while the Realm
/// identifies objects by a `RealmId` string (README: RealmId and database keys).
///
/// - Realm → database: rows are found by their RealmId column; an object created in a Realm is
///   inserted without the database key, which the database generates and the adapter writes
///   back into the object. Foreign keys and link tables hold database keys, looked up from the
///   target's RealmId as the statement runs.
/// - Database → Realm: a row without a RealmId gets one generated from its type and database key
///   (``Mapping/generatedRealmId(type:databaseKey:as:)``, the same on every run and replay), which
///   is written back to the row. Foreign keys become links by finding the target object by its
///   database key; deletes find the object the same way, so the default replica identity is enough.
public struct DatabaseKeyMapping: Sendable {
    /// The Realm property holding the database key (optional in the Realm).
    public let property: String
    public let column: String
    public let type: ScalarType
    /// Its position in ``TableMapping/columns``.
    public let index: Int
}

/// A RealmId to write back to a row the database created without one.
public struct RealmIdAssignment: Hashable, Sendable {
    public var table: String
    /// The database key column and the row's value in it.
    public var keyColumn: String
    public var key: Value
    public var keyType: ScalarType
    public var realmIdColumn: String
    public var realmId: Value
    public var realmIdType: ScalarType
}

extension Mapping {
    /// The RealmId of a row the database created without one: a name-based UUID (RFC 4122
    /// version 5) of the type and the database key, so a replay, a re-load or another adapter
    /// gives the same one. Formatted as lowercase text for a string key.
    public static func generatedRealmId(type: String, databaseKey: Value, as keyType: ScalarType) -> Value {
        var bytes = Array(generatedIdNamespace)
        bytes += Array("\(type)\u{0}\(pathText(databaseKey) ?? "")".utf8)
        var hash = Array(Insecure.SHA1.hash(data: bytes).prefix(16))
        hash[6] = (hash[6] & 0x0F) | 0x50  // version 5
        hash[8] = (hash[8] & 0x3F) | 0x80  // RFC 4122 variant
        let uuid = hash.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return keyType == .uuid ? .uuid(uuid) : .string(uuid.text)
    }

    /// realm-adapter's namespace for generated RealmIds (fixed forever: ids depend on it).
    static let generatedIdNamespace: [UInt8] = [
        0x6b, 0x1f, 0x3c, 0x52, 0x8e, 0x0a, 0x4d, 0x7b, 0x9a, 0x61, 0x2f, 0xd4, 0x85, 0x3e, 0x70, 0xc9,
    ]
}

/// Turns database keys into Realm identities for one database transaction (or one load batch):
/// remembers the identities its rows gave, finds the others in the Realm, and collects the
/// RealmIds to write back.
package final class DatabaseKeyResolver {
    /// The identity of the object of `type` whose database key is `key`, in the Realm at `path`, if it has one.
    public typealias Lookup = (_ path: String, _ type: String, _ key: Value) throws -> Value?

    let lookup: Lookup
    private struct Key: Hashable {
        var path: String
        var type: String
        var key: Value
    }
    private var seen: [Key: Value] = [:]
    /// RealmIds generated for rows without one, to write back before the Realm commits.
    public private(set) var assignments: [RealmIdAssignment] = []

    public init(lookup: @escaping Lookup = { _, _, _ in nil }) {
        self.lookup = lookup
    }

    /// The identity a row of a table with a database key gives its object: its RealmId, or a
    /// generated one, to be written back. Nil for a row without a database key.
    func identity(_ row: some ColumnValues, _ t: TableMapping, _ dk: DatabaseKeyMapping, path: String) throws -> Value?
    {
        guard let key = try Mapping.databaseKey(row, t, dk) else { return nil }
        let (identity, assignment) = try Mapping.identity(row, t, key: key)
        if let assignment { assignments.append(assignment) }
        seen[Key(path: path, type: t.type.name, key: key)] = identity
        return identity
    }

    /// The identity of a row that only its database key names (a delete under the default
    /// replica identity): the RealmId it carries, the one this transaction gave it, or the
    /// Realm's. Nil when the Realm has no such object.
    func existingIdentity(_ row: some ColumnValues, _ t: TableMapping, _ dk: DatabaseKeyMapping, path: String) throws
        -> Value?
    {
        if let id = try Mapping.realmId(row, t) { return id }
        guard let key = try Mapping.databaseKey(row, t, dk) else { return nil }
        return try realmIdentity(t.type.name, key, path: path)
    }

    /// The identity of the object of `type` with database key `key`: seen in this transaction, or in the Realm.
    func realmIdentity(_ type: String, _ key: Value, path: String) throws -> Value? {
        if let id = seen[Key(path: path, type: type, key: key)] { return id }
        return try lookup(path, type, key)
    }

    /// The link a foreign key (a database key) makes: the target's identity, or, for a target
    /// the Realm does not have, the RealmId it would be given (the Realm then reports the
    /// missing target, as for any dangling foreign key).
    func link(_ key: Value, to target: TableMapping, path: String) throws -> Value {
        if key.isNull { return .null }
        return try realmIdentity(target.type.name, key, path: path)
            ?? Mapping.generatedRealmId(type: target.type.name, databaseKey: key, as: target.realmKeyType)
    }
}

extension Mapping {
    /// The RealmId a row carries, as the Realm types it (nil if it has none yet).
    static func realmId(_ row: some ColumnValues, _ t: TableMapping) throws -> Value? {
        guard let id = row.value(column: t.keyColumn), !id.isNull else { return nil }
        return try t.column(named: t.keyColumn).map { try $0.realmValue(id) } ?? id
    }

    /// A row's database key (nil if it has none).
    static func databaseKey(_ row: some ColumnValues, _ t: TableMapping, _ dk: DatabaseKeyMapping) throws -> Value? {
        guard let v = row.value(at: dk.index, of: t) ?? row.value(column: dk.column), !v.isNull else { return nil }
        return try v.coerced(to: dk.type, optional: false)
    }

    /// The identity of the object of a row with database key `key`: its RealmId, or one
    /// generated from the key, with the assignment that writes it back.
    static func identity(_ row: some ColumnValues, _ t: TableMapping, key: Value) throws -> (Value, RealmIdAssignment?)
    {
        if let id = try realmId(row, t) { return (id, nil) }
        let id = generatedRealmId(type: t.type.name, databaseKey: key, as: t.realmKeyType)
        let dk = t.databaseKey!
        return (
            id,
            RealmIdAssignment(
                table: t.table, keyColumn: dk.column, key: key, keyType: dk.type, realmIdColumn: t.keyColumn,
                realmId: id, realmIdType: t.realmKeyType)
        )
    }

    /// ``identity(_:_:key:)`` for a loaded row; throws for a row without a database key.
    func databaseIdentity(_ row: some ColumnValues, _ t: TableMapping, _ dk: DatabaseKeyMapping) throws -> (
        Value, RealmIdAssignment?
    ) {
        guard let key = try Self.databaseKey(row, t, dk) else {
            throw RealmAdapterError.noKeyValue(table: t.table, column: dk.column, what: "database key")
        }
        return try Self.identity(row, t, key: key)
    }
}

extension TableMapping {
    /// The type of the Realm primary key.
    var realmKeyType: ScalarType {
        if case .scalar(let s)? = type.primaryKeyProperty?.type { return s }
        return .string
    }
}
