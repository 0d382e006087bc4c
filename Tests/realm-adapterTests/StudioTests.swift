import Foundation
import TestSupport
import Testing

/// Studio (`/studio`) in a real browser: Debian's headless Chromium driven by Selenium
/// (`Support/studio/studio.py`), against servers the tests start; and its guards through curl.
/// Screenshots of each page go to `.build/artifacts/studio/` (`tour-directory/realms.png`, say).
@Suite(.serialized) struct StudioTests {
    typealias Server = ServeTests.Server

    static func script() -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Support/studio/studio.py").path
    }

    static var shots: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/artifacts/studio").path
    }

    /// Runs the browser script in `mode`; every step it printed, and whether all held.
    static func browse(_ s: Server, _ mode: String, _ arguments: [String] = [], shots name: String? = nil)
        async throws
    {
        let r = try await ChildProcess.run(
            "/usr/bin/env", ["python3", script(), s.url, shots + "/" + (name ?? mode), mode] + arguments)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr.suffix(3000))")
        #expect(!r.stdout.contains("FAIL"), "\(r.stdout)")
    }

    /// The users' ids, by name (`user list`).
    static func ids(_ s: Server) async throws -> [String: String] {
        let listed = try await s.cli(["user", "list", "--config", s.config])
        var out: [String: String] = [:]
        for line in listed.stdout.split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            if fields.count >= 2 { out[fields[0]] = fields[1] }
        }
        return out
    }

    func apply(_ s: Server, _ path: String, _ json: String) async throws {
        let file = s.dir + "/\(UUID().uuidString.prefix(8)).json"
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await s.cli(["realm", "apply", path, "--file", file, "--store", s.store])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Log in, browse the Realms, search them, open one, add a type and a property, filter with a
    /// query (and see a bad one's error where it points), add and delete an object, sort, follow a
    /// link, edit a value (and be refused one that does not fit), read the history, manage users and
    /// grants, read the logs, log out; a non-admin sees only what they may read. Markup in a value
    /// and quotes in a path are shown as text. Each change is a Realm transaction of origin
    /// `studio:<id>`.
    @Test(arguments: ServeTests.Store.all) func aPersonBrowsesAndEditsTheRealmsInABrowser(_ store: ServeTests.Store)
        async throws
    {
        let s = try await Server(on: store)
        let ids = try await Self.ids(s)
        let (bob, carol, alice) = (try #require(ids["bob"]), try #require(ids["carol"]), try #require(ids["alice"]))
        try await apply(
            s, "/shop",
            #"[{"type": "INSERT", "object_type": "Stop", "identity": 4, "values": {"id": 4, "#
                + #""name": "<script>alert(1)</script>"}}]"#
        )
        let note = #"[{"type": "ADD_TYPE", "object_type": "Note", "primary_key": "id", "properties": {"id": "int"}}]"#
        for path in ["/\(bob)/notes", "/\(carol)/secret", #"/a "quoted" path"#] { try await apply(s, path, note) }
        #expect(
            try await s.cli(["permission", "grant", "read", "/shop", "--user", "bob", "--config", s.config]).status == 0
        )
        try await s.start()
        try await Self.browse(s, "tour", [bob, carol], shots: "tour-\(store)")

        let history = try await s.cli(["realm", "history", "/shop", "--store", s.store])
        let edits = history.stdout.split(separator: "\n").filter { $0.contains("studio:\(alice)") }
        // Each change made in Studio is one transaction of alice's: a type, a property, an object
        // added and deleted, a value set.
        let kinds = edits.map { $0.firstMatch(of: /"instructions":\[\{"type":"([A-Z_]+)"/)?.1 ?? "?" }
        #expect(kinds == ["ADD_TYPE", "ADD_PROPERTIES", "INSERT", "DELETE", "SET"], "\(history.stdout)")
        #expect(edits.last?.contains(#""name":"Mill & Co""#) == true, "\(history.stdout)")
        let roles = try await s.cli(["role", "members", #"/a "quoted" path"#, "--config", s.config])
        #expect(roles.stdout.contains("editors\tbob"), "\(roles.stdout)")
        // The users and grants Studio changed, as the CLI sees them.
        #expect(try await Self.ids(s)["dave"] == nil)
        let grants = try await s.cli(["permission", "list", "--config", s.config])
        #expect(grants.stdout.contains(#"/a "quoted" path"#), "\(grants.stdout)")
    }

    /// A session lasts as long as its login (`server.refreshTokenLifetime`); then the browser is
    /// sent to the login page, which says why.
    @Test func anExpiredSessionIsSentToTheLoginPage() async throws {
        let s = try await Server(server: #", "refreshTokenLifetime": 2"#)
        try await s.start()
        try await Self.browse(s, "expiry")
    }

    /// The session cookie is HttpOnly, SameSite=Strict and for /studio only; pages forbid inline
    /// scripts; a form without the session's CSRF token changes nothing; a login form posted
    /// without its own cookie is refused.
    @Test func sessionsAndFormsAreGuarded() async throws {
        let s = try await Server()
        try await s.start()
        let jar = s.dir + "/jar"
        func curl(_ args: [String]) async throws -> String {
            try await ChildProcess.run("/usr/bin/curl", ["-s", "-i", "-c", jar, "-b", jar] + args).stdout
        }
        let form = try await curl([s.url + "/studio/login"])
        #expect(form.contains("Content-Security-Policy: default-src 'none'; script-src 'self'"), "\(form)")
        let csrf = try #require(form.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
        let forged = try await ChildProcess.run(
            "/usr/bin/curl",
            ["-s", "-i", "-d", "csrf=\(csrf)&name=alice&password=alice-password", s.url + "/studio/login"]
        ).stdout
        #expect(forged.contains("403 Forbidden") && !forged.contains("studio=ey"), "\(forged)")
        let login = try await curl(["-d", "csrf=\(csrf)&name=alice&password=alice-password", s.url + "/studio/login"])
        let cookie = try #require(
            login.split(separator: "\r\n").first { $0.hasPrefix("Set-Cookie: studio=") }, "\(login)")
        for flag in ["HttpOnly", "SameSite=Strict", "Path=/studio"] { #expect(cookie.contains(flag), "\(cookie)") }
        #expect(!cookie.contains("Secure"), "not over plain HTTP")

        let edit = "path=%2Fshop&type=Stop&key=1&property=name&value=Forged"
        let refused = try await curl(["-d", edit + "&csrf=0123", s.url + "/studio/object"])
        #expect(refused.contains("403 Forbidden") && refused.contains("CSRF"), "\(refused)")
        let page = try await curl([s.url + "/studio/object?path=%2Fshop&type=Stop&key=1"])
        let token = try #require(page.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
        let saved = try await curl(["-d", edit + "&csrf=\(token)", s.url + "/studio/object"])
        #expect(saved.contains("303 See Other"), "\(saved)")
        let models = try await curl([s.url + "/studio/models?path=%2Fshop&language=kotlin"])
        #expect(
            models.contains(#"attachment; filename="shop.kt""#) && models.contains("class Stop : RealmObject {"),
            "\(models)")
        let dump = try await s.cli(["realm", "dump", "/shop", "--store", s.store])
        #expect(dump.stdout.contains("Forged") && dump.stdout.components(separatedBy: "Forged").count == 2)
    }

    /// What the review of Studio found, each refused or harmless: a quote with a combining mark
    /// (one Swift `Character`) stays escaped in an attribute; changing an object's key does not
    /// stop the server; the permission metadata's objects and a restricted Realm's history are
    /// refused; a change to an object deleted meanwhile does not bring it back; a trailing slash
    /// goes to the page; a page's event stream ends when its session does.
    @Test func hostileRequestsAreRefusedAndChangeNothing() async throws {
        let s = try await Server()
        try await apply(
            s, "/shop",
            #"[{"type": "INSERT", "object_type": "Stop", "identity": 5, "values": {"id": 5, "#
                + #""name": "a\"\u0301 data-injected=\"1"}}]"#
        )
        try await s.start()
        func session(_ name: String) async throws -> (jar: String, csrf: String) { try await Self.session(s, name) }
        func curl(_ jar: String, _ args: [String]) async throws -> String { try await Self.curl(jar, args) }
        let (alice, csrf) = try await session("alice")
        #expect(!csrf.isEmpty)

        let object = try await curl(alice, [s.url + "/studio/object?path=%2Fshop&type=Stop&key=5"])
        #expect(object.contains("200 OK") && !object.contains("a\"\u{301}"), "a raw quote, then U+0301")

        let key = try await curl(
            alice, ["-d", "csrf=\(csrf)&path=%2Fshop&type=Stop&key=1&property=id&value=2", s.url + "/studio/object"])
        #expect(key.contains("400 Bad Request") && key.contains("no property id that Studio can change"), "\(key)")
        #expect(try await curl(alice, [s.url + "/studio/assets/studio.css"]).contains("200 OK"), "the server answers")

        _ = try await s.cli(
            ["realm", "apply", "/shop", "--file", "/dev/stdin", "--store", s.store],
            stdin: #"[{"type": "DELETE", "object_type": "Stop", "identity": 3}]"#)
        let gone = try await curl(
            alice,
            ["-d", "csrf=\(csrf)&path=%2Fshop&type=Stop&key=3&property=name&value=Back", s.url + "/studio/object"])
        #expect(gone.contains("404 Not Found"), "\(gone)")
        let dump = try await s.cli(["realm", "dump", "/shop", "--store", s.store, "--type", "Stop"])
        #expect(!dump.stdout.contains("Back"), "\(dump.stdout)")

        #expect(try await s.cli(["role", "add", "/shop", "editors", "--config", s.config]).status == 0)
        let system = try await curl(
            alice, ["-d", "csrf=\(csrf)&path=%2Fshop&type=__Role&value.name=mine", s.url + "/studio/add-object"])
        #expect(system.contains("403 Forbidden") && system.contains("fine-grained permissions"), "\(system)")
        // A privilege on a type that does not exist is refused, not taken as one on the whole Realm.
        let nowhere = try await curl(
            alice,
            [
                "-d", "csrf=\(csrf)&path=%2Fshop&action=revoke&role=everyone&target=stop&privileges=read",
                s.url + "/studio/roles",
            ])
        #expect(nowhere.contains("400 Bad Request") && nowhere.contains("stop"), "\(nowhere)")
        #expect(try await s.cli(["permission", "list", "/shop", "--config", s.config]).status == 0)
        let realmWide = try await curl(alice, [s.url + "/studio/roles?path=%2Fshop"])
        #expect(realmWide.contains("the Realm</td><td>everyone: all"), "\(realmWide)")
        #expect(
            try await s.cli(["permission", "grant", "read", "/shop", "--user", "bob", "--config", s.config]).status == 0
        )
        let (bob, _) = try await session("bob")
        let history = try await curl(bob, [s.url + "/studio/history?path=%2Fshop"])
        #expect(history.contains("403 Forbidden") && history.contains("fine-grained permissions"), "\(history)")

        let slash = try await curl(alice, [s.url + "/studio/realms/?q=shop"])
        #expect(slash.contains("303 See Other") && slash.contains("Location: ../realms?q=shop"), "\(slash)")

        // A stream of changes, then the session ends: the stream ends within the recheck (2 s).
        let out = s.dir + "/events.out"
        let stream = try ChildProcess(
            "/usr/bin/curl", ["-s", "-N", "-b", alice, "--max-time", "20", s.url + "/studio/events"], stdout: out,
            stderr: s.dir + "/events.err")
        try await Task.sleep(for: .milliseconds(500))
        let loggedOut = try await curl(alice, ["-d", "csrf=\(csrf)", s.url + "/studio/logout"])
        #expect(loggedOut.contains("303 See Other"), "\(loggedOut)")
        let started = ContinuousClock.now
        let status = await stream.wait()
        #expect(status == 0 && ContinuousClock.now - started < .seconds(8), "the stream outlived its session")
    }

    /// A Studio session of the user `name` (password `<name>-password`) through curl: its cookie
    /// jar and CSRF token.
    static func session(_ s: Server, _ name: String) async throws -> (jar: String, csrf: String) {
        let jar = s.dir + "/\(name).jar"
        let form = try await ChildProcess.run("/usr/bin/curl", ["-s", "-c", jar, "-b", jar, s.url + "/studio/login"])
        let csrf = try #require(form.stdout.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
        _ = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-c", jar, "-b", jar, "-d", "csrf=\(csrf)&name=\(name)&password=\(name)-password",
                s.url + "/studio/login",
            ])
        let page = try await ChildProcess.run("/usr/bin/curl", ["-s", "-b", jar, s.url + "/studio/realms"]).stdout
        return (jar, String(page.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1 ?? ""))
    }

    /// curl with a session's cookie jar: the answer's head and body.
    static func curl(_ jar: String, _ args: [String]) async throws -> String {
        try await ChildProcess.run("/usr/bin/curl", ["-s", "-i", "-b", jar] + args).stdout
    }

    /// An object's own permissions (a type with an ACL) on its page: who holds what; a user
    /// with `setPermissions` on it shares it from there, as `permission --type --key` would; one
    /// without sees no form, and a change they post anyway is refused and changes nothing.
    @Test func anObjectsOwnPermissionsAreManagedOnItsPage() async throws {
        let t = try await ServePermissionsTests.Setup(on: .directory)
        let made = try await t.gql(t.bob.token, #"mutation { createDoc(input: {id: "d1", title: "plan"}) { id } }"#)
        #expect(made == #"{"data": {"createDoc": {"id": "d1"}}}"#)
        let page = t.s.url + "/studio/object?path=%2Fshared%2Fdocs&type=Doc&key=%22d1%22"
        let (bob, bobCSRF) = try await Self.session(t.s, "bob")
        let own = try await Self.curl(bob, [page])
        #expect(
            own.contains("Permissions on this Doc")
                && own.contains("__User:\(t.bob.id)</td><td>read,update,delete,setPermissions"), "\(own)")
        #expect(own.contains(#"id="acl-form""#), "bob may share his document: \(own)")

        let share = "path=%2Fshared%2Fdocs&type=Doc&key=%22d1%22&role=__User:\(t.carol.id)&privileges=read"
        let shared = try await Self.curl(
            bob, ["-d", "csrf=\(bobCSRF)&action=grant&" + share, t.s.url + "/studio/object-permissions"])
        #expect(shared.contains("200 OK") && shared.contains("Done: grant read on this Doc"), "\(shared)")
        #expect(shared.contains("__User:\(t.carol.id)</td><td>read"), "\(shared)")
        #expect(try await t.gql(t.carol.token, "{ docs { id } }") == #"{"data": {"docs": [{"id": "d1"}]}}"#)

        let (carol, carolCSRF) = try await Self.session(t.s, "carol")
        let theirs = try await Self.curl(carol, [page])
        #expect(theirs.contains("Permissions on this Doc") && !theirs.contains(#"id="acl-form""#), "\(theirs)")
        let taken = try await Self.curl(
            carol,
            [
                "-d", "csrf=\(carolCSRF)&action=grant&" + share.replacingOccurrences(of: "=read", with: "=all"),
                t.s.url + "/studio/object-permissions",
            ])
        #expect(taken.contains("400 Bad Request") && !taken.contains("Done:"), "\(taken)")
        let privileges = #"{ _privileges(type: "Doc", key: "d1") { read update setPermissions } }"#
        #expect(
            try await t.gql(t.carol.token, privileges)
                == #"{"data": {"_privileges": {"read": true, "setPermissions": false, "update": false}}}"#)
        // Revoking one's own read: the change is made, and the page goes to the type's list.
        let ownRead = "path=%2Fshared%2Fdocs&type=Doc&key=%22d1%22&role=__User:\(t.bob.id)&privileges=read"
        let hidden = try await Self.curl(
            bob, ["-d", "csrf=\(bobCSRF)&action=revoke&" + ownRead, t.s.url + "/studio/object-permissions"])
        #expect(hidden.contains("303 See Other") && hidden.contains("Location: objects?"), "\(hidden)")
        let back = try await t.s.cli([
            "permission", "grant", ServePermissionsTests.Setup.path, "--user", "bob", "--privileges", "read", "--type",
            "Doc", "--key", "d1", "--config", t.s.config,
        ])
        #expect(back.status == 0, "\(back.stderr)")
        // A personal role names a user who exists.
        let nobody = try await Self.curl(
            bob,
            [
                "-d", "csrf=\(bobCSRF)&action=grant&" + share.replacingOccurrences(of: t.carol.id, with: "no-such-id"),
                t.s.url + "/studio/object-permissions",
            ])
        #expect(nobody.contains("400 Bad Request") && nobody.contains("no user with the id"), "\(nobody)")
        // With read alone on the path, bob keeps setPermissions on his document but changes its ACL
        // no more than GraphQL lets him: no form, and a grant he posts is refused.
        let lowered = try await t.s.cli(
            ["permission", "grant", "read", ServePermissionsTests.Setup.path, "--everyone", "--config", t.s.config])
        #expect(lowered.status == 0, "\(lowered.stderr)")
        let readOnly = try await Self.curl(bob, [page])
        #expect(readOnly.contains("Permissions on this Doc") && !readOnly.contains(#"id="acl-form""#), "\(readOnly)")
        let refused = try await Self.curl(
            bob,
            [
                "-d", "csrf=\(bobCSRF)&action=revoke&" + share, t.s.url + "/studio/object-permissions",
            ])
        #expect(refused.contains("403 Forbidden"), "\(refused)")
        #expect(try await t.gql(t.carol.token, "{ docs { id } }") == #"{"data": {"docs": [{"id": "d1"}]}}"#)
    }
}
