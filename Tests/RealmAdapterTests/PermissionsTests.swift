import Foundation
import Testing

@testable import RealmAdapter

/// Fine-grained permissions in the store: the legacy model's levels (Realm, class, object),
/// roles and their union, the ACL filter run in SQL, and the rules for changing them.
@Suite struct PermissionsTests {
    /// A Realm /docs with permission metadata, a type `Doc` with an ACL property and `Tag` without.
    static func docs(_ kind: StoreKind) throws -> TemporaryStore {
        let s = try TemporaryStore(kind)
        try s.store.write(to: "/docs", origin: "test") { tx in
            try tx.enablePermissions()
            try tx.addType(
                ObjectSchema(
                    name: "Doc", primaryKey: "id",
                    properties: [
                        Property(name: "id", type: .scalar(.string)),
                        Property(name: "permissions", type: .list(.link(PermissionTypes.permission))),
                    ]))
            try tx.addType(
                ObjectSchema(name: "Tag", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))]))
        }
        return s
    }

    static func ids(_ s: TemporaryStore, _ access: RealmAccess, _ type: String = "Doc") throws -> [String] {
        try s.store.objects(of: type, in: "/docs", ObjectQuery(visibleTo: access.isUnrestricted ? nil : access)).map {
            $0.identity.description
        }
    }

    @Test(arguments: StoreKind.all) func aRealmWithoutMetadataIsUnrestrictedAndANewOneOpenToEveryone(_ kind: StoreKind)
        throws
    {
        let s = try Self.docs(kind)
        try s.store.write(to: "/plain", origin: "test") { tx in
            try tx.addType(
                ObjectSchema(name: "Tag", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))]))
            #expect(try tx.access(user: "u1", isAdmin: false).isUnrestricted)
            #expect(try tx.enablePermissions())
            #expect(try !tx.enablePermissions())
        }
        #expect(try s.store.access(to: "/plain", user: "u1", isAdmin: false).realm == .all)
        // The metadata types come with everyone holding everything.
        try s.store.write(to: "/docs", origin: "test") { tx in
            for k in ["d1", "d2"] { try tx.create("Doc", ["id": .string(k)]) }
        }
        let u1 = try s.store.access(to: "/docs", user: "u1", isAdmin: false)
        #expect(!u1.isUnrestricted && u1.realm == .all && u1.privileges(ofType: "Doc") == .all)
        #expect(u1.roles == ["everyone", "__User:u1"])
        // An object whose ACL is empty is nobody's but an admin's, its creator's included.
        #expect(try Self.ids(s, u1) == [])
        #expect(try s.store.privileges(of: "Doc", identity: .string("d1"), in: "/docs", u1) == [])
        #expect(try Self.ids(s, .unrestricted).count == 2)
        #expect(try Self.ids(s, try s.store.access(to: "/docs", user: "u1", isAdmin: true)).count == 2)
        // Objects of a type without an ACL are governed by the class level alone.
        try s.store.write(to: "/docs", origin: "test") { try $0.create("Tag", ["id": .int(1)]) }
        #expect(try Self.ids(s, u1, "Tag") == ["1"])
    }

    @Test(arguments: StoreKind.all) func eachLevelNarrowsTheOneAboveAndRolesAddUp(_ kind: StoreKind) throws {
        let s = try Self.docs(kind)
        try s.store.write(to: "/docs", origin: "test") { tx in
            let op = RealmAccess.unrestricted
            for k in ["d1", "d2", "d3"] { try tx.create("Doc", ["id": .string(k)]) }
            try tx.addRole("editors", by: op)
            try tx.addMember("u2", to: "editors", by: op)
            // d1: everyone reads; d2: u1 alone reads and updates; d3: editors read.
            try tx.setPrivileges([.read], granted: true, role: "everyone", on: .object("Doc", .string("d1")), by: op)
            try tx.setPrivileges(
                [.read, .update], granted: true, role: "__User:u1", on: .object("Doc", .string("d2")), by: op)
            try tx.setPrivileges([.read], granted: true, role: "editors", on: .object("Doc", .string("d3")), by: op)
        }
        let u1 = try s.store.access(to: "/docs", user: "u1", isAdmin: false)
        let u2 = try s.store.access(to: "/docs", user: "u2", isAdmin: false)
        #expect(u2.roles == ["everyone", "__User:u2", "editors"])
        #expect(try Self.ids(s, u1) == ["d1", "d2"])
        #expect(try Self.ids(s, u2) == ["d1", "d3"])
        #expect(try s.store.privileges(of: "Doc", identity: .string("d2"), in: "/docs", u1) == [.read, .update])
        // The class level narrows: without update on Doc, the ACL's update counts for nothing…
        try s.store.write(to: "/docs", origin: "test") { tx in
            try tx.setPrivileges([.update], granted: false, role: "everyone", on: .type("Doc"), by: .unrestricted)
        }
        let narrowed = try s.store.access(to: "/docs", user: "u1", isAdmin: false)
        #expect(try s.store.privileges(of: "Doc", identity: .string("d2"), in: "/docs", narrowed) == [.read])
        // …and the Realm level narrows both: without read there, nothing is readable.
        try s.store.write(to: "/docs", origin: "test") { tx in
            try tx.setPrivileges([.read], granted: false, role: "everyone", on: .realm, by: .unrestricted)
        }
        let blind = try s.store.access(to: "/docs", user: "u1", isAdmin: false)
        #expect(!blind.canRead("Doc") && !blind.canRead("Tag"))
        #expect(try s.store.permissions(on: .type("Doc"), in: "/docs")?.map(\.role) == ["everyone"])
        #expect(try s.store.permissions(on: .type("Tag"), in: "/docs") == nil)
    }

    @Test(arguments: StoreKind.all) func aUserGrantsOnlyWhatTheyHoldWhereTheyMaySetPermissions(_ kind: StoreKind) throws
    {
        let s = try Self.docs(kind)
        let op = RealmAccess.unrestricted
        try s.store.write(to: "/docs", origin: "test") { tx in
            try tx.create("Doc", ["id": .string("d1")])
            try tx.setPrivileges(
                [.read, .setPermissions], granted: true, role: "__User:u1", on: .object("Doc", .string("d1")), by: op)
            // Realm-level permissions are guarded by the class __Realm, roles by __Role.
            for guarded in [PermissionTypes.realm, PermissionTypes.role] {
                try tx.setPrivileges([.setPermissions], granted: false, role: "everyone", on: .type(guarded), by: op)
            }
        }
        func attempt(_ body: (inout WriteTransaction, RealmAccess) throws -> Void) throws -> RealmAdapterError? {
            do {
                try s.store.write(to: "/docs", origin: "test") { tx in
                    try body(&tx, try tx.access(user: "u1", isAdmin: false))
                }
                return nil
            } catch let e as RealmAdapterError { return e }
        }
        let d1 = PermissionTarget.object("Doc", .string("d1"))
        // u1 shares d1 with u2 for reading: held, and setPermissions there.
        #expect(try attempt { try $0.setPrivileges([.read], granted: true, role: "__User:u2", on: d1, by: $1) } == nil)
        #expect(try Self.ids(s, try s.store.access(to: "/docs", user: "u2", isAdmin: false)) == ["d1"])
        // Not update, which u1 does not hold on d1.
        let above = try attempt { try $0.setPrivileges([.update], granted: true, role: "__User:u2", on: d1, by: $1) }
        #expect(above?.code == .permissionDenied && above?.message.contains("does not hold update") == true)
        // Not at the Realm level (no setPermissions on __Realm), nor the roles (none on __Role).
        let realm = try attempt { try $0.setPrivileges([.read], granted: true, role: "everyone", on: .realm, by: $1) }
        #expect(realm?.code == .permissionDenied && realm?.message.contains("setPermissions") == true)
        let join = try attempt { try $0.addMember("u1", to: "editors", by: $1) }
        #expect(join?.code == .permissionDenied, "\(String(describing: join))")
        // Forged role names: the kept roles cannot be added, removed or joined, even by the operator.
        for role in ["everyone", "__User:u2"] {
            let e = try attempt { tx, _ in try tx.addMember("u1", to: role, by: op) }
            #expect(e?.message.contains("role the server keeps") == true, "\(role)")
        }
        let unknown = try attempt { tx, _ in try tx.setPrivileges(.all, granted: true, role: "ghosts", on: d1, by: op) }
        #expect(unknown?.message.contains("has no role 'ghosts'") == true)
        // A refusal writes nothing: d1's ACL is what it was.
        #expect(try s.store.permissions(on: d1, in: "/docs")?.map(\.role).sorted() == ["__User:u1", "__User:u2"])
        // Taking back all a role had leaves no empty entry (nor its __Permission) behind.
        let before = try s.store.count(of: PermissionTypes.permission, in: "/docs")
        #expect(try attempt { try $0.setPrivileges(.all, granted: false, role: "__User:u2", on: d1, by: $1) } == nil)
        #expect(try s.store.permissions(on: d1, in: "/docs")?.map(\.role) == ["__User:u1"])
        #expect(try s.store.count(of: PermissionTypes.permission, in: "/docs") == before - 1)
        // Names the metadata could not show as they are: control characters, padding, no user.
        for bad in ["a\nb", " x", "__User:", String(repeating: "r", count: 201)] {
            let e = try attempt { tx, _ in try tx.setPrivileges([.read], granted: true, role: bad, on: d1, by: op) }
            #expect(e?.message.contains("A role's name is 1 to 200 characters") == true, "\(bad)")
        }
    }

    @Test(arguments: StoreKind.all) func changingAPermissionThatTwoHoldersShareChangesOneOnly(_ kind: StoreKind) throws
    {
        let s = try Self.docs(kind)
        let op = RealmAccess.unrestricted
        // An operator's raw write makes d1's and d2's ACLs list one __Permission.
        try s.store.write(to: "/docs", origin: "test") { tx in
            var values: PropertyValues = ["role": .string("everyone")]
            for n in Privileges.named { values.append(n.property, .bool(n.privilege == .read)) }
            let shared = try tx.create(PermissionTypes.permission, values)
            try tx.create("Doc", ["id": .string("d1"), "permissions": .list([shared])])
            try tx.create("Doc", ["id": .string("d2"), "permissions": .list([shared])])
            try tx.setPrivileges(
                [.update], granted: true, role: "everyone", on: .object("Doc", .string("d1")), by: op)
        }
        let everyone = try s.store.access(to: "/docs", user: nil, isAdmin: false)
        #expect(try s.store.privileges(of: "Doc", identity: .string("d1"), in: "/docs", everyone) == [.read, .update])
        #expect(try s.store.privileges(of: "Doc", identity: .string("d2"), in: "/docs", everyone) == [.read])
    }

    @Test func privilegesParseFromTheirNames() throws {
        #expect(try Privileges(names: "read, canQuery,CREATE") == [.read, .query, .create])
        #expect(try Privileges(names: "all") == .all)
        #expect(throws: RealmAdapterError.self) { try Privileges(names: "read,fly") }
        #expect(throws: RealmAdapterError.self) { try Privileges(names: "") }
        #expect(Privileges([.read, .setPermissions]).description == "read,setPermissions")
    }
}
