import Foundation
import TestSupport
import Testing

/// Users' own accounts, as the legacy clients reach them: logging out (`/auth/revoke`), changing
/// a password (`PUT /auth/password`), the anonymous and nickname providers, admin tokens, and an
/// admin's lookup of a user. Through curl, gql and the CLI, against servers the test starts.
@Suite(.serialized) struct ServeAccountTests {
    typealias Server = ServeTests.Server

    /// A second `serve` on the same store (another port): what one ends, the other refuses.
    final class Replica {
        let port = freePort()
        let process: ChildProcess

        init(of s: Server) async throws {
            let config = s.dir + "/replica.json"
            let text = try String(contentsOfFile: s.config, encoding: .utf8)
                .replacingOccurrences(of: "\"port\": \(s.port)", with: "\"port\": \(port)")
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            var env = ProcessInfo.processInfo.environment
            env["REALM_ADAPTER_SIGNING_KEY"] = s.key
            process = try ChildProcess(
                ChildProcess.built("realm-adapter"), ["serve", "--config", config], environment: env,
                stdout: s.dir + "/replica.log", stderr: s.dir + "/replica.log")
            for _ in 0..<300 {
                let r = try await ChildProcess.run(
                    "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", url + "/auth"])
                if r.stdout == "400" { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            Issue.record("the replica did not start")
        }

        var url: String { "http://127.0.0.1:\(port)" }

        deinit {
            process.signal(SIGTERM)
            process.reap()
        }
    }

    static func revoke(_ s: Server, _ token: String, as caller: String? = nil) async throws -> (Int, String) {
        let r = try await s.curl("POST", "/auth/revoke", #"{"token": "\#(token)"}"#, token: caller ?? token)
        return (r.status, r.body)
    }

    /// Logging out ends the refresh token and the access tokens made from it, on every server of
    /// the store, and closes a subscription opened with one (4401) within the recheck interval.
    /// Only the token's user or an admin ends a token.
    @Test func loggingOutEndsALoginEverywhere() async throws {
        let s = try await Server()
        try await s.start()
        let replica = try await Replica(of: s)
        #expect(
            try await s.cli(["permission", "grant", "read", "/shop", "--user", "bob", "--config", s.config])
                .status == 0)
        let bob = try await s.login("bob")
        let other = try await s.login("bob")
        let access = try await s.access(bob, "/shop").get()
        let query = "{ stops { id } }"
        #expect(try await s.graphQL("/shop", access, query).contains(#""id": 3"#))

        // A subscription opened with the access token.
        let out = s.dir + "/subscriber.out"
        let subscriber = try ChildProcess(
            "/usr/bin/env",
            [
                "python3", Server.script("subscribe.py"), "ws://127.0.0.1:\(s.port)/graphql/shop", access,
                "subscription { stops { id } }", "1000",
            ], stdout: out, stderr: s.dir + "/subscriber.err")
        func lines() -> String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        for _ in 0..<500 where !lines().contains(#"{"ready": true}"#) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(lines().contains(#"{"ready": true}"#), "\(lines())")

        // Carol cannot end bob's token; bob can.
        let carol = try await s.login("carol")
        let (status, body) = try await Self.revoke(s, bob, as: carol)
        #expect(status == 403 && body.contains("Only its user or an admin"), "\(body)")
        let revoked = try await Self.revoke(s, bob)
        #expect(revoked.0 == 200 && revoked.1.contains(#""revoked":true"#), "\(revoked.1)")

        // Ended: the refresh token, its access token, on this server and on the replica.
        let graphQL = try await s.curl("POST", "/graphql/shop", #"{"query": "\#(query)"}"#, token: access)
        #expect(graphQL.status == 401 && graphQL.body.contains("revoked"), "\(graphQL.body)")
        guard case .failure(let refused) = try await s.access(bob, "/shop") else {
            Issue.record("a revoked refresh token still got an access token")
            return
        }
        #expect(refused.status == 401 && refused.body.contains("revoked"), "\(refused.body)")
        let onReplica = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-X", "POST", replica.url + "/graphql/shop", "-H", "Authorization: \(access)", "-d",
                "{\"query\": \"\(query)\"}",
            ])
        #expect(onReplica.stdout.contains("revoked"), "\(onReplica.stdout)")
        // The subscription closes with 4401 within the recheck interval (2 s).
        #expect(await subscriber.wait() == 3, "\(lines())")
        #expect(lines().contains(#""closed": 4401"#), "\(lines())")

        // bob's other login is another token, still good; an admin ends it.
        #expect(try await s.graphQL("/shop", try await s.access(other, "/shop").get(), query).contains(#""id": 3"#))
        let alice = try await s.login("alice")
        #expect(try await Self.revoke(s, other, as: alice).0 == 200)
        guard case .failure = try await s.access(other, "/shop") else {
            Issue.record("an admin's revocation did not end bob's other login")
            return
        }
        // A fresh login works; no token is in either server's log.
        #expect(
            try await s.graphQL("/shop", try await s.access(try await s.login("bob"), "/shop").get(), query)
                .contains(#""id": 3"#))
        for log in ["serve.log", "replica.log"] {
            let text = (try? String(contentsOfFile: s.dir + "/" + log, encoding: .utf8)) ?? ""
            for token in [bob, other, access, carol, alice] { #expect(!text.contains(token), "\(log)") }
        }
    }

    /// Past `failedLoginLimit` wrong passwords for a name within `failedLoginWindow`, that name's
    /// logins are refused (429, saying when to try again) on every path that checks a password
    /// (POST /auth, PUT /auth/password, Studio's login), whatever the name's case, even with the
    /// right password; other names log in; a name no user has is held back alike; after the
    /// window, the right password works again. Before, guesses were limited only by bcrypt's cost.
    @Test func wrongPasswordsHoldANameBack() async throws {
        let s = try await Server(server: #", "failedLoginLimit": 3, "failedLoginWindow": 10"#)
        try await s.start()
        func logIn(_ name: String, _ password: String) async throws -> (status: Int, body: String) {
            try await s.curl(
                "POST", "/auth",
                #"{"provider": "password", "data": "\#(name)", "user_info": {"password": "\#(password)"}}"#)
        }
        for _ in 1...3 { #expect(try await logIn("bob", "guess").status == 401) }
        let held = try await logIn("Bob", "bob-password")
        #expect(held.status == 429 && held.body.contains("try again in"), "\(held.body)")
        let change = try await s.curl(
            "PUT", "/auth/password",
            #"{"provider_id": "bob", "data": {"old_password": "bob-password", "new_password": "bob-new-password"}}"#)
        #expect(change.status == 429, "\(change.body)")
        let jar = s.dir + "/bob.jar"
        let form = try await ChildProcess.run("/usr/bin/curl", ["-s", "-c", jar, "-b", jar, s.url + "/studio/login"])
        let csrf = try #require(form.stdout.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
        let studio = try await StudioTests.curl(
            jar, ["-c", jar, "-d", "csrf=\(csrf)&name=bob&password=bob-password", s.url + "/studio/login"])
        #expect(
            studio.contains("429 Too Many Requests") && studio.contains("Too many wrong passwords")
                && !studio.contains("studio=ey"), "Studio's login refuses, saying why: \(studio)")
        #expect(try await logIn("alice", "alice-password").status == 200, "another name logs in")
        // Guesses sent at once: only the limit's worth is checked (before, all were: each passed
        // the count before the first was known wrong).
        let guess = s.dir + "/guess.json"
        try #"{"provider": "password", "data": "carol", "user_info": {"password": "guess"}}"#.write(
            toFile: guess, atomically: true, encoding: .utf8)
        let burst = try await ChildProcess.run(
            "/usr/bin/curl",
            ["-s", "-Z", "--parallel-max", "10", "-H", "Content-Type: application/json", "--data-binary", "@" + guess]
                + Array(repeating: s.url + "/auth", count: 10))
        let checked = burst.stdout.components(separatedBy: "Wrong user name or password").count - 1
        let heldBack = burst.stdout.components(separatedBy: "Too many wrong passwords").count - 1
        #expect(checked == 3 && heldBack == 7, "\(burst.stdout)")
        // A name no user has is held back alike: the answers do not tell which names exist.
        for _ in 1...3 { #expect(try await logIn("nobody", "guess").status == 401) }
        #expect(try await logIn("Nobody", "guess").status == 429)
        try await Task.sleep(for: .seconds(10.2))
        #expect(try await logIn("bob", "bob-password").status == 200, "after the window")
        for _ in 1...2 { #expect(try await logIn("bob", "guess").status == 401) }
        #expect(try await logIn("bob", "bob-password").status == 200)
        #expect(try await logIn("BOB", "guess").status == 401, "a success starts the count again")
    }

    /// A user changes their own password with a token of theirs, or with the old password; an
    /// admin changes anyone's. Each ends the tokens issued before it.
    @Test func passwordsChangeByTheirUserOrAnAdmin() async throws {
        let s = try await Server()
        try await s.start()
        let bob = try await s.login("bob")
        let change = try await s.curl(
            "PUT", "/auth/password", #"{"data": {"new_password": "bob-second-password"}}"#, token: bob)
        #expect(change.status == 200, "\(change.body)")
        let stale = try await s.curl("POST", "/auth", #"{"provider": "realm", "data": "\#(bob)", "path": "/~/x"}"#)
        #expect(stale.status == 401 && stale.body.contains("password changed"), "\(stale.body)")
        let oldPassword = try await s.curl(
            "POST", "/auth", #"{"provider": "password", "data": "bob", "user_info": {"password": "bob-password"}}"#)
        #expect(oldPassword.status == 401)
        _ = try await s.login("bob", password: "bob-second-password")

        // Without a token: the old password.
        let wrong = try await s.curl(
            "PUT", "/auth/password",
            #"{"provider_id": "bob", "data": {"old_password": "not-it-at-all", "new_password": "bob-third-password"}}"#)
        #expect(wrong.status == 401, "\(wrong.body)")
        let right = try await s.curl(
            "PUT", "/auth/password",
            #"{"provider_id": "bob", "data": {"old_password": "bob-second-password", "#
                + #""new_password": "bob-third-password"}}"#
        )
        #expect(right.status == 200, "\(right.body)")
        _ = try await s.login("bob", password: "bob-third-password")

        // Another user's: admins only.
        let carolId = try #require(
            try await s.cli(["user", "list", "--config", s.config]).stdout
                .split(separator: "\n").first { $0.hasPrefix("carol\t") }?.split(separator: "\t")[1])
        let bobRefresh = try await s.login("bob", password: "bob-third-password")
        let notAdmin = try await s.curl(
            "PUT", "/auth/password", #"{"data": {"new_password": "carol-by-bob", "user_id": "\#(carolId)"}}"#,
            token: bobRefresh)
        #expect(notAdmin.status == 403 && notAdmin.body.contains("Only admins"), "\(notAdmin.body)")
        let byAdmin = try await s.curl(
            "PUT", "/auth/password", #"{"data": {"new_password": "carol-by-alice", "user_id": "\#(carolId)"}}"#,
            token: try await s.login("alice"))
        #expect(byAdmin.status == 200, "\(byAdmin.body)")
        _ = try await s.login("carol", password: "carol-by-alice")

        // Refused, changing nothing (a probe changed the caller's own password with each): a user_id
        // that is not a string, a provider_id naming someone else, an old password that is not
        // theirs, and a Realm's access token instead of a login.
        let aliceRefresh = try await s.login("alice")
        for body in [
            #"{"data": {"new_password": "alice-changed-password", "user_id": 12345}}"#,
            #"{"data": {"new_password": "alice-changed-password", "user_id": null}}"#,
            #"{"provider_id": "bob", "data": {"old_password": "x", "new_password": "alice-changed-password"}}"#,
            #"{"data": {"old_password": "not-alices", "new_password": "alice-changed-password"}}"#,
        ] {
            let r = try await s.curl("PUT", "/auth/password", body, token: aliceRefresh)
            #expect(r.status == 400 || r.status == 401, "\(body): \(r.body)")
        }
        let shopAccess = try await s.access(aliceRefresh, "/shop").get()
        let byAccess = try await s.curl(
            "PUT", "/auth/password", #"{"data": {"new_password": "alice-changed-password"}}"#, token: shopAccess)
        #expect(byAccess.status == 401 && byAccess.body.contains("not an access token"), "\(byAccess.body)")
        _ = try await s.login("alice")

        // Refused, changing nothing: too short, and no token nor old password.
        let short = try await s.curl(
            "PUT", "/auth/password", #"{"data": {"new_password": "short"}}"#, token: bobRefresh)
        #expect(short.status == 400 && short.body.contains("at least 8"), "\(short.body)")
        let anonymous = try await s.curl("PUT", "/auth/password", #"{"data": {"new_password": "whatever-long"}}"#)
        #expect(anonymous.status == 400 && anonymous.body.contains("old_password"), "\(anonymous.body)")
        _ = try await s.login("bob", password: "bob-third-password")
    }

    /// Providers anonymous and nickname: off unless configured; an anonymous user owns `/~/`
    /// and nothing else; a nickname is the same user each time.
    @Test func anonymousAndNicknameProvidersAreOffUnlessConfigured() async throws {
        let off = try await Server()
        try await off.start()
        for provider in ["anonymous", "nickname"] {
            let r = try await off.curl("POST", "/auth", #"{"provider": "\#(provider)", "data": "x"}"#)
            #expect(r.status == 403 && r.body.contains("Provider \(provider) is off"), "\(r.body)")
        }

        let s = try await Server(server: #", "allowAnonymous": true, "allowNickname": true"#)
        try await s.start()
        let first = try await s.curl("POST", "/auth", #"{"provider": "anonymous"}"#)
        let second = try await s.curl("POST", "/auth", #"{"provider": "anonymous"}"#)
        let (a, b) = (
            try Server.field(first.body, "refresh_token", "token_data", "identity"),
            try Server.field(second.body, "refresh_token", "token_data", "identity")
        )
        #expect(!a.isEmpty && a != b, "\(first.body) \(second.body)")
        let anonymous = try Server.field(first.body, "refresh_token", "token")
        guard case .success = try await s.access(anonymous, "/~/notes") else {
            Issue.record("an anonymous user has no access to their own path")
            return
        }
        guard case .failure(let shop) = try await s.access(anonymous, "/shop") else {
            Issue.record("an anonymous user reached /shop")
            return
        }
        #expect(shop.status == 403, "\(shop.body)")

        let nick = try await s.curl("POST", "/auth", #"{"provider": "nickname", "data": "dev-erin"}"#)
        let again = try await s.curl("POST", "/auth", #"{"provider": "nickname", "data": "dev-erin"}"#)
        #expect(
            try Server.field(nick.body, "refresh_token", "token_data", "identity")
                == Server.field(again.body, "refresh_token", "token_data", "identity"))
        let noPassword = try await s.curl(
            "PUT", "/auth/password", #"{"data": {"new_password": "a-long-password"}}"#, token: anonymous)
        #expect(noPassword.status == 400 && noPassword.body.contains("has no password"), "\(noPassword.body)")
        let takeover = try await s.curl("POST", "/auth", #"{"provider": "nickname", "data": "alice"}"#)
        #expect(takeover.status == 409, "\(takeover.body)")
        let log = (try? String(contentsOfFile: s.dir + "/serve.log", encoding: .utf8)) ?? ""
        #expect(log.contains("Provider nickname is on"), "\(log)")
    }

    /// Admin tokens: made by the CLI, working as an admin anywhere, listed by name, revoked at
    /// once on every server of the store.
    @Test func adminTokensWorkUntilRevoked() async throws {
        let s = try await Server()
        try await s.start()
        let replica = try await Replica(of: s)
        let made = try await s.cli(["user", "admin-token", "create", "billing", "--config", s.config])
        #expect(made.status == 0, "\(made.stderr)")
        let token = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await s.graphQL("/shop", token, "{ stops { id } }").contains(#""id": 3"#))
        let twice = try await s.cli(["user", "admin-token", "create", "billing", "--config", s.config])
        #expect(twice.status != 0 && twice.stderr.contains("exists already"), "\(twice.stderr)")
        let listed = try await s.cli(["user", "admin-token", "list", "--config", s.config])
        #expect(listed.stdout.hasPrefix("billing\tcreated "), "\(listed.stdout)")
        #expect(!listed.stdout.contains(token))

        // An access token through it (a probe found it refused), a grant and an offer made with it
        // (the offer was refused at accept), and no /~/ of its own.
        let access = try await s.access(token, "/shop").get()
        #expect(try await s.graphQL("/shop", access, "{ stops { id } }").contains(#""id": 3"#))
        let grant = try await s.curl(
            "POST", "/permissions", #"{"path": "/shop", "user": "bob", "level": "read"}"#, token: token)
        #expect(grant.status == 200, "\(grant.body)")
        let offer = try await s.curl(
            "POST", "/permissions/offers", #"{"realmPath": "/shop", "accessLevel": "write"}"#, token: token)
        let carol = try await s.login("carol")
        let accepted = try await s.curl(
            "POST", "/permissions/offers/\(try Server.field(offer.body, "token"))/accept", token: carol)
        #expect(accepted.status == 200, "\(accepted.body)")
        let home = try await s.curl("POST", "/realms/~/x", ServeSharingTests.notes, token: token)
        #expect(home.status == 400 && home.body.contains("no directory of its own"), "\(home.body)")
        let password = try await s.curl(
            "PUT", "/auth/password", #"{"data": {"new_password": "a-long-password"}}"#, token: token)
        #expect(password.status == 400 && password.body.contains("has no password"), "\(password.body)")

        #expect(try await s.cli(["user", "admin-token", "revoke", "billing", "--config", s.config]).status == 0)
        for url in [s.url, replica.url] {
            let r = try await ChildProcess.run(
                "/usr/bin/curl",
                [
                    "-s", "-X", "POST", url + "/graphql/shop", "-H", "Authorization: \(token)", "-d",
                    #"{"query": "{ stops { id } }"}"#,
                ])
            #expect(r.stdout.contains("admin token was revoked"), "\(url): \(r.stdout)")
        }
        let afterRevoke = try await s.curl("POST", "/graphql/shop", #"{"query": "{ stops { id } }"}"#, token: access)
        #expect(afterRevoke.status == 401 && afterRevoke.body.contains("revoked"), "\(afterRevoke.body)")
        let missing = try await s.cli(["user", "admin-token", "revoke", "billing", "--config", s.config])
        #expect(missing.status != 0 && missing.stderr.contains("no admin token named billing"), "\(missing.stderr)")
    }

    /// An admin looks a user up by id or by provider and name; others may not.
    @Test func adminsLookUsersUp() async throws {
        let s = try await Server()
        try await s.start()
        let alice = try await s.login("alice")
        let byName = try await s.curl("GET", "/auth/users/password/bob", token: alice)
        #expect(byName.status == 200, "\(byName.body)")
        let id = try Server.field(byName.body, "user_id")
        #expect(id.count == 32 && byName.body.contains(#""provider_id":"bob""#), "\(byName.body)")
        let byId = try await s.curl("GET", "/auth/users/\(id)", token: alice)
        #expect(byId.status == 200 && byId.body.contains(#""is_admin":false"#), "\(byId.body)")
        #expect(try await s.curl("GET", "/auth/users/jwt/bob", token: alice).status == 404)
        let asBob = try await s.curl("GET", "/auth/users/password/carol", token: try await s.login("bob"))
        #expect(asBob.status == 403 && asBob.body.contains("Only admins"), "\(asBob.body)")
        #expect(try await s.curl("GET", "/auth/users/password/carol").status == 401)
    }

    /// Every new route, given malformed JSON, missing fields, a body over 1 MiB or the wrong
    /// method, answers a 4xx with a message and changes nothing; and no password, token or email
    /// address reaches the server's log.
    @Test func badRequestsAreRefusedClearlyAndChangeNothing() async throws {
        let s = try await Server()
        try await s.start()
        let bob = try await s.login("bob")
        let big = String(repeating: "x", count: (1 << 20) + 10)
        let routes: [(String, String)] = [
            ("POST", "/auth/revoke"), ("PUT", "/auth/password"), ("POST", "/auth/password/updateAccount"),
            ("POST", "/permissions/offers"), ("POST", "/realms/~/notes"),
        ]
        for (method, path) in routes {
            for (body, status) in [("{not json", 400), ("[]", 400), ("{}", 400), (big, 413)] {
                let r = try await s.curl(method, path, body, token: bob)
                #expect(
                    r.status == status && r.body.contains(#""error""#),
                    "\(method) \(path) \(body.prefix(10)): \(r.status) \(r.body.prefix(200))")
            }
            let wrong = try await s.curl("PATCH", path, token: bob)
            #expect(wrong.status == 405 && wrong.body.contains("takes \(method)"), "\(path): \(wrong.body)")
        }
        #expect(try await s.curl("PATCH", "/permissions/offers/abc", token: bob).status == 405)
        // The older routes too (they answered 404 with an empty body).
        let permissions = try await s.curl("DELETE", "/permissions", token: bob)
        #expect(permissions.status == 405 && permissions.body.contains("takes POST or GET"), "\(permissions.body)")
        #expect(try await s.curl("GET", "/auth").body.contains("takes POST"))
        // Nothing changed: bob's token and password still work, and no Realm was made.
        #expect((try? await s.access(bob, "/~/notes").get()) != nil)
        _ = try await s.login("bob")
        let store = try await s.cli(["realm", "list", "--store", s.dir + "/store"])
        #expect(!store.stdout.contains("notes"), "\(store.stdout)")
        let log = (try? String(contentsOfFile: s.dir + "/serve.log", encoding: .utf8)) ?? ""
        for secret in [bob, "bob-password", "alice-password"] { #expect(!log.contains(secret)) }
    }
}
