import Foundation

/// What a role may do, at the Realm, class (type) or object level: the legacy "query-based
/// sync" privileges, named as its `__Permission` class names them.
public struct Privileges: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = Privileges(rawValue: 1)
    public static let update = Privileges(rawValue: 2)
    public static let delete = Privileges(rawValue: 4)
    public static let setPermissions = Privileges(rawValue: 8)
    public static let query = Privileges(rawValue: 16)
    public static let create = Privileges(rawValue: 32)
    public static let modifySchema = Privileges(rawValue: 64)
    public static let all = Privileges(rawValue: 127)

    /// Each privilege with its short name and its `__Permission` property, in the legacy order.
    public static let named: [(privilege: Privileges, name: String, property: String)] = [
        (.read, "read", "canRead"), (.update, "update", "canUpdate"), (.delete, "delete", "canDelete"),
        (.setPermissions, "setPermissions", "canSetPermissions"), (.query, "query", "canQuery"),
        (.create, "create", "canCreate"), (.modifySchema, "modifySchema", "canModifySchema"),
    ]

    /// Privileges from a comma-separated list of names (`read,query`; the `can…` forms and `all`
    /// too, in any case). An unknown name is an error that lists the known ones.
    public init(names list: String) throws {
        var out: Privileges = []
        for raw in list.split(separator: ",") {
            let name = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if name == "all" {
                out.formUnion(.all)
                continue
            }
            guard let p = Self.named.first(where: { $0.name.lowercased() == name || $0.property.lowercased() == name })
            else { throw RealmAdapterError.unknownPrivilege(String(raw)) }
            out.formUnion(p.privilege)
        }
        guard !out.isEmpty else { throw RealmAdapterError.unknownPrivilege(list) }
        self = out
    }

    /// The short names of the privileges held, in the legacy order.
    public var names: [String] { Self.named.filter { contains($0.privilege) }.map(\.name) }

    public var description: String { isEmpty ? "none" : self == .all ? "all" : names.joined(separator: ",") }
}
