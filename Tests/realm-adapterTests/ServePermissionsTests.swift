import Foundation
import RealmAdapter
import TestSupport
import Testing

/// Fine-grained permissions through `serve`, with a GraphQL client nobody here wrote (gql): the
/// legacy documentation's own flow (a Realm open to everyone, an admin role, everyone lowered to
/// read-only, a document private to its author), what each level refuses, links to hidden
/// objects, and a subscription losing an object the moment its ACL stops letting the
/// subscriber read it.
@Suite(.serialized) struct ServePermissionsTests {
    typealias Server = ServeTests.Server

    static let docs = #"""
        {"schema": [
          {"type": "ADD_TYPE", "object_type": "Doc", "primary_key": "id",
           "properties": {"id": "string", "title": "string", "next": "Doc", "permissions": "__Permission[]"}},
          {"type": "ADD_TYPE", "object_type": "Note", "primary_key": "id",
           "properties": {"id": "int", "text": "string", "doc": "Doc", "related": "Doc[]"}}]}
        """#

    /// A server with /shared/docs (made by alice, an admin; write for everyone on the path),
    /// and bob's and carol's access tokens and ids.
    struct Setup {
        let s: Server
        let alice: String
        let bob: (token: String, id: String)
        let carol: (token: String, id: String)
        static let path = "/shared/docs"

        init(on store: ServeTests.Store) async throws {
            s = try await Server(on: store)
            try await s.start()
            let aliceRefresh = try await s.login("alice")
            let made = try await s.curl("POST", "/realms" + Self.path, ServePermissionsTests.docs, token: aliceRefresh)
            #expect(made.status == 200, "\(made.body)")
            let granted = try await s.cli([
                "permission", "grant", "write", Self.path, "--everyone", "--config", s.config,
            ])
            #expect(granted.status == 0, "\(granted.stderr)")
            alice = try await s.access(aliceRefresh, Self.path).get()
            bob = try await Self.user(s, "bob")
            carol = try await Self.user(s, "carol")
        }

        /// A user's access token to the Realm, and their id.
        static func user(_ s: Server, _ name: String) async throws -> (token: String, id: String) {
            let r = try await s.curl(
                "POST", "/auth",
                #"{"provider": "password", "data": "\#(name)", "user_info": {"password": "\#(name)-password"}}"#)
            let id = try Server.field(r.body, "refresh_token", "token_data", "identity")
            return (try await s.access(try Server.field(r.body, "refresh_token", "token"), path).get(), id)
        }

        func gql(_ token: String, _ query: String) async throws -> String {
            try await s.graphQL(Self.path, token, query)
        }
    }

    @Test(arguments: ServeTests.Store.all) func theLegacyTutorialFlow(_ store: ServeTests.Store) async throws {
        let t = try await Setup(on: store)
        let (bob, carol) = (t.bob.token, t.carol.token)
        // A new Realm is open to everyone.
        #expect(
            try await t.gql(carol, "{ _privileges { read update create setPermissions modifySchema } }")
                == #"{"data": {"_privileges": {"create": true, "modifySchema": true, "read": true, "setPermissions": "#
                + #"true, "update": true}}}"#)
        // bob's document is his alone: its ACL names his personal role (a creator's default).
        let made = try await t.gql(bob, #"mutation { createDoc(input: {id: "d1", title: "plan"}) { id } }"#)
        #expect(made == #"{"data": {"createDoc": {"id": "d1"}}}"#)
        #expect(try await t.gql(bob, "{ docs { id } }") == #"{"data": {"docs": [{"id": "d1"}]}}"#)
        #expect(try await t.gql(carol, "{ docs { id } }") == #"{"data": {"docs": []}}"#)
        #expect(try await t.gql(carol, #"{ doc(id: "d1") { id } }"#) == #"{"data": {"doc": null}}"#)
        let privileges = #"{ _privileges(type: "Doc", key: "d1") { read update delete setPermissions } }"#
        #expect(try await t.gql(bob, privileges).contains(#""delete": true, "read": true, "setPermissions": true"#))
        #expect(try await t.gql(carol, privileges).contains(#""delete": false, "read": false"#))
        // Shared with carol for reading: she reads it, and may neither update nor delete it.
        let share =
            #"mutation { _grant(role: "__User:\#(t.carol.id)", type: "Doc", key: "d1", "#
            + #"privileges: ["read"]) { role privileges } }"#
        #expect(try await t.gql(bob, share).contains(#"{"privileges": ["read"], "role": "__User:\#(t.carol.id)"}"#))
        #expect(
            try await t.gql(carol, "{ docs { id title } }") == #"{"data": {"docs": [{"id": "d1", "title": "plan"}]}}"#)
        let update = try await t.gql(
            carol, #"mutation { createDoc(input: {id: "d1", title: "mine"}, updatePolicy: MODIFIED) { id } }"#)
        #expect(update.contains("Permission denied: updating Doc d1 needs the update privilege"), "\(update)")
        let delete = try await t.gql(carol, #"mutation { deleteDoc(id: "d1") }"#)
        #expect(delete.contains("needs the delete privilege"), "\(delete)")
        #expect(try await t.gql(carol, "{ docs { title } }").contains(#""title": "plan""#))
        // Nor may she pass on what she was given (no setPermissions), or more than she holds.
        let reshare = try await t.gql(
            carol, #"mutation { _grant(role: "everyone", type: "Doc", key: "d1", privileges: ["read"]) { role } }"#)
        #expect(reshare.contains("needs the setPermissions privilege"), "\(reshare)")

        // An admin role with bob in it; everyone lowered to read-only at the Realm level.
        for m in [
            #"mutation { _addRole(name: "admins") }"#,
            #"mutation { _addRoleMember(role: "admins", userId: "\#(t.bob.id)") }"#,
            #"mutation { _grant(role: "admins", privileges: ["all"]) { role } }"#,
            #"mutation { _revoke(role: "everyone", privileges: ["update", "delete", "setPermissions", "create", "#
                + #""modifySchema"]) { role privileges } }"#,
        ] {
            let r = try await t.gql(t.alice, m)
            #expect(!r.contains("errors"), "\(m): \(r)")
        }
        #expect(
            try await t.gql(carol, "{ _roles { name members } }").contains(
                #"{"members": ["\#(t.bob.id)"], "name": "admins"}"#))
        let note = #"mutation { createNote(input: {id: 1, text: "hi", doc: "d1"}) { id } }"#
        let readOnly = try await t.gql(carol, note)
        #expect(readOnly.contains("Permission denied: creating a Note in the Realm needs the update"), "\(readOnly)")
        #expect(try await t.gql(bob, note) == #"{"data": {"createNote": {"id": 1}}}"#)
        #expect(try await t.gql(carol, "{ _privileges { read query update } }").contains(#""update": false"#))
        // carol cannot make herself an admin, nor give everyone back what was taken.
        let join = try await t.gql(carol, #"mutation { _addRoleMember(role: "admins", userId: "\#(t.carol.id)") }"#)
        #expect(join.contains("Permission denied"), "\(join)")
        let back = try await t.gql(carol, #"mutation { _grant(role: "everyone", privileges: ["update"]) { role } }"#)
        #expect(back.contains("Permission denied"), "\(back)")
        #expect(try await t.gql(t.alice, "{ _roles { name members } }").contains(#""members": ["\#(t.bob.id)"]"#))
        // Forged and unknown role names are refused, even for an admin: a personal role names a
        // user who exists, and a role's members are users' ids.
        let ghostUser = try await t.gql(
            bob, #"mutation { _grant(role: "__User:deadbeef", type: "Doc", key: "d1", privileges: ["read"]) { role } }"#
        )
        #expect(ghostUser.contains("There is no user with id 'deadbeef'"), "\(ghostUser)")
        let byName = try await t.gql(t.alice, #"mutation { _addRoleMember(role: "admins", userId: "carol") }"#)
        #expect(byName.contains("There is no user with id 'carol'"), "\(byName)")
        #expect(try await t.gql(t.alice, "{ _roles { name } }").contains("deadbeef") == false)
        let forged = try await t.gql(t.alice, #"mutation { _addRole(name: "__User:\#(t.carol.id)") }"#)
        #expect(forged.contains("role the server keeps"), "\(forged)")
        let ghost = try await t.gql(t.alice, #"mutation { _grant(role: "ghosts", privileges: ["read"]) { role } }"#)
        #expect(ghost.contains("has no role 'ghosts'"), "\(ghost)")
    }

    /// Each privilege taken from everyone at each level (Realm, class, object), against each
    /// operation a user may try: what is refused is exactly what the levels, each narrowing the
    /// one above it, no longer allow. One Realm per case, all through gql (`matrix.py`).
    @Test(arguments: ServeTests.Store.all) func thePrivilegeMatrix(_ store: ServeTests.Store) async throws {
        let s = try await Server(on: store)
        try await s.start()
        let (admin, carol) = (try await s.login("alice"), try await s.login("carol"))
        let levels = ["realm", "class", "object"]
        let cases = levels.flatMap { level in
            Privileges.named.map {
                #"{"path": "/matrix/\#(level)-\#($0.name)", "level": "\#(level)", "privilege": "\#($0.name)"}"#
            }
        }
        let r = try await ChildProcess.run(
            "/usr/bin/env", ["python3", Server.script("matrix.py"), s.url, admin, carol, "carol"],
            input: "[" + cases.joined(separator: ",") + "]")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == levels.count * Privileges.named.count, "\(r.stdout)\(r.stderr)")
        for line in lines {
            let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let c = json["case"] as! [String: String]
            let ops = json["ops"] as! [String: [String: Any]]
            let taken = try Privileges(names: c["privilege"]!)
            // What remains at each level, each within the one above it.
            let realm = c["level"] == "realm" ? Privileges.all.subtracting(taken) : .all
            let type = realm.intersection(c["level"] == "class" ? Privileges.all.subtracting(taken) : .all)
            let object = type.intersection(c["level"] == "object" ? Privileges.all.subtracting(taken) : .all)
            let expected: [String: Bool] = [
                "query": object.contains(.read) && type.contains(.query),
                "create": realm.contains(.update) && type.contains(.create),
                "update": object.contains(.update),
                "setPermissions": object.contains(.setPermissions),
                "schema": type.contains(.modifySchema),
                "newType": realm.contains(.modifySchema),
                "delete": realm.contains(.update) && object.contains(.delete),
            ]
            for (op, want) in expected {
                let answer = ops[op]!
                let got =
                    op == "query"
                    ? "\(answer["answer"]!)".contains("d1") : (answer["ok"] as! Bool)
                #expect(got == want, "\(c) \(op): \(answer)")
                if !got && !["query", "schema", "newType"].contains(op) {
                    #expect("\(answer["answer"]!)".contains("Permission denied"), "\(c) \(op): \(answer)")
                }
            }
        }
    }

    @Test(arguments: ServeTests.Store.all) func hiddenObjectsStayHiddenAtEveryDepth(_ store: ServeTests.Store)
        async throws
    {
        let t = try await Setup(on: store)
        let (bob, carol) = (t.bob.token, t.carol.token)
        // d1 is bob's alone; d2 everyone reads; notes (no ACL) link to both.
        for m in [
            #"mutation { createDoc(input: {id: "d1", title: "secret"}) { id } }"#,
            #"mutation { createDoc(input: {id: "d2", title: "open"}, acl: [{role: "everyone", "#
                + #"privileges: ["read"]}, {role: "__User:\#(t.bob.id)", privileges: ["read", "update"]}]) { id } }"#,
            #"mutation { createNotes(input: [{id: 1, text: "a", doc: "d1", related: ["d1"]}, "#
                + #"{id: 2, text: "b", doc: "d2", related: ["d2"]}]) { id } }"#,
        ] {
            let r = try await t.gql(bob, m)
            #expect(!r.contains("errors"), "\(m): \(r)")
        }
        // A link to an unreadable object is null; _linkingObjects and filters see only the readable.
        #expect(
            try await t.gql(carol, #"{ notes(sortBy: "id") { id doc { id title } } }"#)
                == #"{"data": {"notes": [{"doc": null, "id": 1}, {"doc": {"id": "d2", "title": "open"}, "id": 2}]}}"#)
        #expect(
            try await t.gql(carol, #"{ docs(query: "title CONTAINS 'e'") { id } }"#)
                == #"{"data": {"docs": [{"id": "d2"}]}}"#)
        // A filter that follows a link (or a list) tests nothing the user may not read: the hidden
        // d1 is as missing (a probe read its title a letter at a time through `doc.title`).
        for filter in ["doc.title BEGINSWITH 's'", "doc.id == 'd1'", "related.title == 'secret'"] {
            let q = #"{ notes(query: "\#(filter)") { id } }"#
            let seen = try await t.gql(carol, q)
            #expect(seen.contains(#"{"notes": []"#), "\(filter) \(seen)")
            #expect(try await t.gql(bob, q).contains(#"{"notes": [{"id": 1}]"#), "\(filter)")
        }
        #expect(
            try await t.gql(carol, #"{ notes(query: "NOT doc.title BEGINSWITH 's'", sortBy: "id") { id } }"#)
                == #"{"data": {"notes": [{"id": 1}, {"id": 2}]}}"#)
        // Sorted by a link, a hidden target sorts as a null link would: its key says nothing.
        let z = try await t.gql(
            bob,
            #"mutation { createDoc(input: {id: "z1", title: "z"}) { id } createNote(input: {id: 3, "#
                + #"text: "c", doc: "z1"}) { id } }"#)
        #expect(!z.contains("errors"), "\(z)")
        #expect(
            try await t.gql(carol, #"{ notes(sortBy: "doc") { id } }"#)
                == #"{"data": {"notes": [{"id": 1}, {"id": 3}, {"id": 2}]}}"#)
        #expect(
            try await t.gql(bob, #"{ notes(sortBy: "doc") { id } }"#)
                == #"{"data": {"notes": [{"id": 1}, {"id": 2}, {"id": 3}]}}"#)
        // The executor's path (a fragment on a union) as well as the direct one.
        let linking =
            #"{ note(id: 1) { doc { id } } notes(query: "id = 2") { doc { "#
            + #"_linkingObjects(objectType: "Note", property: "doc") { ... on NoteCollection { count } } } } }"#
        let linked = try await t.gql(carol, linking)
        #expect(linked.contains(#""count": 1"#), "\(linked)")
        // An ACL cannot be overwritten through an input: updatePolicy ALL leaves it as it is.
        let all = try await t.gql(
            bob, #"mutation { createDoc(input: {id: "d2", title: "open!"}, updatePolicy: ALL) { id } }"#)
        #expect(!all.contains("errors"), "\(all)")
        #expect(try await t.gql(carol, "{ docs { title } }") == #"{"data": {"docs": [{"title": "open!"}]}}"#)
        // A cycle through a hidden object: d1 -> d2 -> d1. carol's walk stops at d1, however deep.
        for m in [
            #"mutation { createDoc(input: {id: "d1", next: "d2"}, updatePolicy: MODIFIED) { id } }"#,
            #"mutation { createDoc(input: {id: "d2", next: "d1"}, updatePolicy: MODIFIED) { id } }"#,
        ] {
            let r = try await t.gql(bob, m)
            #expect(!r.contains("errors"), "\(m): \(r)")
        }
        #expect(
            try await t.gql(carol, #"{ doc(id: "d2") { next { id } } docs { id next { id next { id } } } }"#)
                == #"{"data": {"doc": {"next": null}, "docs": [{"id": "d2", "next": null}]}}"#)
        #expect(
            try await t.gql(bob, #"{ doc(id: "d2") { next { next { next { id } } } } }"#)
                == #"{"data": {"doc": {"next": {"next": {"next": {"id": "d1"}}}}}}"#)
        // deleteDocs deletes only what the user may delete, and says how many.
        #expect(
            try await t.gql(carol, #"mutation { deleteDocs(query: "TRUEPREDICATE") }"#)
                == #"{"data": {"deleteDocs": 0}}"#)
        #expect(
            try await t.gql(bob, #"mutation { deleteDocs(query: "TRUEPREDICATE") }"#)
                == #"{"data": {"deleteDocs": 2}}"#)
        #expect(try await t.gql(t.alice, "{ docs { id } }") == #"{"data": {"docs": [{"id": "d2"}]}}"#)
    }

    @Test(arguments: ServeTests.Store.all) func aSubscriptionLosesAnObjectWhenItsACLStopsAllowingIt(
        _ store: ServeTests.Store
    ) async throws {
        let t = try await Setup(on: store)
        let (bob, carol) = (t.bob.token, t.carol.token)
        let shared =
            #"mutation { createDoc(input: {id: "d1", title: "x"}, acl: [{role: "__User:\#(t.bob.id)", "#
            + #"privileges: ["all"]}, {role: "__User:\#(t.carol.id)", privileges: ["read"]}]) { id } }"#
        #expect(try await t.gql(bob, shared) == #"{"data": {"createDoc": {"id": "d1"}}}"#)
        let out = t.s.dir + "/sub.out"
        let ws = "ws://127.0.0.1:\(t.s.port)/graphql" + Setup.path
        let sub = try ChildProcess(
            "/usr/bin/env",
            ["python3", Server.script("subscribe.py"), ws, carol, "subscription { docs { id } }", "2"],
            stdout: out, stderr: t.s.dir + "/sub.err")
        func lines() -> [String] {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        for _ in 0..<1_500 where !lines().contains(#"{"ready": true}"#) && sub.isRunning {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(lines().first == #"{"client": 0, "result": {"docs": [{"id": "d1"}]}}"#, "\(lines())")
        let revoke =
            #"mutation { _revoke(role: "__User:\#(t.carol.id)", type: "Doc", key: "d1", "#
            + #"privileges: ["read"]) { role } }"#
        let started = ContinuousClock.now
        #expect(!(try await t.gql(bob, revoke)).contains("errors"))
        #expect(await sub.wait() == 0, "\(lines())")
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(lines().last == #"{"client": 0, "result": {"docs": []}}"#, "\(lines())")
    }

    @Test(arguments: ServeTests.Store.all) func rolesAndGrantsFromTheCommandLine(_ store: ServeTests.Store) async throws
    {
        let t = try await Setup(on: store)
        func cli(_ args: [String]) async throws -> CLI.Result {
            try await t.s.cli(args + ["--config", t.s.config])
        }
        let path = Setup.path
        #expect(try await cli(["role", "add", path, "editors"]).status == 0)
        let joined = try await cli(["role", "add-member", path, "editors", "--user", "carol"])
        #expect(joined.status == 0, "\(joined.stderr)")
        let members = try await cli(["role", "members", path])
        #expect(members.stdout.contains("editors\tcarol"), "\(members.stdout)")
        // everyone loses create on Doc; editors keep it.
        let lowered = try await cli([
            "permission", "revoke", path, "--everyone", "--privileges", "create", "--type", "Doc",
        ])
        #expect(
            lowered.stdout.contains("everyone now holds read,update,delete,setPermissions,query,modifySchema at Doc"))
        let given = try await cli([
            "permission", "grant", path, "--role", "editors", "--privileges", "all", "--type", "Doc",
        ])
        #expect(given.status == 0, "\(given.stderr)")
        let make = #"mutation { createDoc(input: {id: "d9", title: "t"}) { id } }"#
        #expect(try await t.gql(t.bob.token, make).contains("needs the create privilege"))
        #expect(try await t.gql(t.carol.token, make) == #"{"data": {"createDoc": {"id": "d9"}}}"#)
        // An object's ACL, for a user by name.
        let shared = try await cli(
            ["permission", "grant", path, "--user", "bob", "--privileges", "read", "--type", "Doc", "--key", "d9"])
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(try await t.gql(t.bob.token, "{ docs { id } }") == #"{"data": {"docs": [{"id": "d9"}]}}"#)
        // What is granted, and that each change was a Realm transaction like any other.
        let listed = try await cli(["permission", "list", path])
        #expect(listed.stdout.contains("everyone\tall\tthe Realm"), "\(listed.stdout)")
        #expect(listed.stdout.contains("editors\tall\tDoc"), "\(listed.stdout)")
        let history = try await t.s.cli(["realm", "history", path, "--config", t.s.config])
        #expect(history.stdout.split(separator: "\n").filter { $0.contains(#""origin":"cli""#) }.count == 5)
        // Mistakes say what to do; --type without --privileges changes no path permission.
        let pathLevel = try await cli(["permission", "revoke", path, "--everyone", "--type", "Doc"])
        #expect(pathLevel.status != 0 && pathLevel.stderr.contains("give --privileges too"), "\(pathLevel.stderr)")
        #expect(try await cli(["permission", "list", path]).stdout.contains("\(path)\teveryone\twrite"))
        let forged = try await cli(["permission", "grant", path, "--role", "__User:x", "--privileges", "read"])
        #expect(forged.stderr.contains("--user NAME"), "\(forged.stderr)")
        let system = try await t.s.curl(
            "POST", "/realms" + path,
            #"{"schema": [{"type": "ADD_PROPERTIES", "object_type": "__Permission", "properties": {"x": "string?"}}]}"#,
            token: try await t.s.login("alice"))
        #expect(system.status == 400 && system.body.contains("system type"), "\(system.body)")
        let typo = try await cli(["permission", "grant", path, "--role", "editors", "--privileges", "reed"])
        #expect(typo.status != 0 && typo.stderr.contains("'reed' is not a privilege"), "\(typo.stderr)")
        let noACL = try await cli(
            ["permission", "grant", path, "--everyone", "--privileges", "read", "--type", "Note", "--key", "1"])
        #expect(noACL.stderr.contains("Note has no ACL property"), "\(noACL.stderr)")
        let nobody = try await cli(["role", "add-member", path, "editors", "--user", "nobody"])
        #expect(nobody.status == 1 && nobody.stderr.contains("There is no user named nobody"), "\(nobody.stderr)")
        let kept = try await cli(["role", "remove", path, "everyone"])
        #expect(kept.stderr.contains("role the server keeps"), "\(kept.stderr)")
        // The metadata types are listed as the system types they are.
        let schema = try await t.s.cli(["realm", "schema", path, "--config", t.s.config])
        let systemAt = try #require(schema.stdout.range(of: "System types"), "\(schema.stdout)")
        #expect(schema.stdout[..<systemAt.lowerBound].contains("Note (primary key id)"))
        #expect(schema.stdout[systemAt.upperBound...].contains("__Permission (no primary key)"), "\(schema.stdout)")
    }
}
