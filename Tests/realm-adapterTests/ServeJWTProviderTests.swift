import Foundation
import TestSupport
import Testing

/// Provider `jwt`: tokens of an app's own auth service, signed by PyJWT (a library nobody here
/// wrote) with keys made by openssl, checked with the configured public key; and
/// `server.allowSignUp`.
@Suite(.serialized) struct ServeJWTProviderTests {
    typealias Server = ServeTests.Server

    /// A key pair made by openssl: (private, public) PEM paths.
    static func keyPair(_ dir: String, _ name: String, ec: Bool = false) async throws -> (String, String) {
        let (privateKey, publicKey) = (dir + "/\(name).pem", dir + "/\(name).pub.pem")
        let options =
            ec
            ? ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
            : ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        let made = try await ChildProcess.run("/usr/bin/openssl", ["genpkey"] + options + ["-out", privateKey])
        try #require(made.status == 0, "\(made.stderr)")
        let pub = try await ChildProcess.run(
            "/usr/bin/openssl", ["pkey", "-in", privateKey, "-pubout", "-out", publicKey])
        try #require(pub.status == 0, "\(pub.stderr)")
        return (privateKey, publicKey)
    }

    /// A token signed by PyJWT (or one of the two forgeries of sign.py).
    static func sign(_ key: String, _ algorithm: String, _ claims: String) async throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Support/jwt-issuer/sign.py").path
        let r = try await ChildProcess.run("/usr/bin/env", ["python3", script, key, algorithm, claims])
        try #require(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func jwtLogin(_ s: Server, _ token: String) async throws -> (status: Int, body: String) {
        try await s.curl("POST", "/auth", #"{"provider": "jwt", "data": "\#(token)"}"#)
    }

    @Test func anAppsAuthServiceVouchesForItsUsers() async throws {
        let keys = NSTemporaryDirectory() + "realm-adapter-jwt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let (app, appPublic) = try await Self.keyPair(keys, "app")
        let (other, _) = try await Self.keyPair(keys, "other")
        let s = try await Server(
            server: #", "allowSignUp": false, "jwt": {"publicKeyFile": "\#(appPublic)", "audience": "shop-app"}"#)
        try await s.start()

        // A user the service vouches for logs in, is added at first sight, and is the same user after.
        let dana = try await Self.sign(app, "RS256", #"{"userId": "dana", "exp": "+300", "aud": "shop-app"}"#)
        let first = try await Self.jwtLogin(s, dana)
        #expect(first.status == 200, "\(first.body)")
        let id = try Server.field(first.body, "refresh_token", "token_data", "identity")
        let again = try await Self.jwtLogin(
            s, try await Self.sign(app, "RS256", #"{"userId": "dana", "exp": "+60", "aud": ["x", "shop-app"]}"#))
        #expect(try Server.field(again.body, "refresh_token", "token_data", "identity") == id, "\(again.body)")
        let listed = try await s.cli(["user", "list", "--config", s.config]).stdout
        #expect(listed.contains("dana\t\(id)\tjwt"), "\(listed)")

        // Their refresh token works like any: their own Realms, and nothing else without a grant.
        let refresh = try Server.field(first.body, "refresh_token", "token")
        guard case .success = try await s.access(refresh, "/~/notes") else {
            Issue.record("dana got no access token for her own path")
            return
        }
        guard case .failure(let denied) = try await s.access(refresh, "/shop") else {
            Issue.record("dana got an access token for /shop without a grant")
            return
        }
        #expect(denied.status == 403, "\(denied.body)")

        // The isAdmin claim makes an admin; its absence next time takes it away.
        let erin = try await Self.sign(
            app, "RS256", #"{"userId": "erin", "isAdmin": true, "exp": "+300", "aud": "shop-app"}"#)
        let admin = try Server.field(try await Self.jwtLogin(s, erin).body, "refresh_token", "token")
        #expect(
            try await s.graphQL("/shop", admin, "{ stops { id } }")
                == #"{"data": {"stops": [{"id": 1}, {"id": 2}, {"id": 3}]}}"#)
        let erinAgain = try await Self.sign(app, "RS256", #"{"userId": "erin", "exp": "+300", "aud": "shop-app"}"#)
        let plain = try Server.field(try await Self.jwtLogin(s, erinAgain).body, "refresh_token", "token")
        let demoted = try await s.curl("POST", "/graphql/shop", #"{"query": "{ stops { id } }"}"#, token: plain)
        #expect(demoted.status == 401 && demoted.body.contains("not a refresh token"), "\(demoted.body)")

        // Refused, each with a reason: another key, the two classic forgeries, expired, no exp,
        // no userId, another audience.
        let refused: [(String, String)] = [
            (
                try await Self.sign(other, "RS256", #"{"userId": "dana", "exp": "+300", "aud": "shop-app"}"#),
                "not signed with"
            ),
            (
                try await Self.sign(app, "none", #"{"userId": "dana", "exp": "+300", "aud": "shop-app"}"#),
                "not signed with"
            ),
            (
                try await Self.sign(
                    appPublic, "HS256-with-key", #"{"userId": "dana", "exp": "+300", "aud": "shop-app"}"#),
                "not signed with"
            ),
            (try await Self.sign(app, "RS256", #"{"userId": "dana", "exp": "-10", "aud": "shop-app"}"#), "has expired"),
            (try await Self.sign(app, "RS256", #"{"userId": "dana", "aud": "shop-app"}"#), "no expiry"),
            (
                try await Self.sign(app, "RS256", #"{"sub": "dana", "exp": "+300", "aud": "shop-app"}"#),
                "no userId claim"
            ),
            (try await Self.sign(app, "RS256", #"{"userId": "dana", "exp": "+300", "aud": "other"}"#), "audience"),
            ("not.a.token", "not valid"),
        ]
        for (token, reason) in refused {
            let r = try await Self.jwtLogin(s, token)
            #expect(r.status == 401 && r.body.contains(reason), "\(reason): \(r.status) \(r.body)")
        }

        // A provider cannot take over a password user's account, nor the reverse.
        let bob = try await Self.jwtLogin(
            s, try await Self.sign(app, "RS256", #"{"userId": "Bob", "exp": "+300", "aud": "shop-app"}"#))
        #expect(bob.status == 409 && bob.body.contains("belongs to a user of provider password"), "\(bob.body)")
        // Ids that differ from a user's only in case, or that user names may not be (a NUL, control
        // characters, spaces at either end), are refused, never merged into one account (a probe
        // found `DANA` and `dana\u0000evil` logging in as dana).
        for (userId, status) in [("DANA", 409), (#"dana\u0000evil"#, 400), (" dana ", 400), (#"bo\nb"#, 400)] {
            let r = try await Self.jwtLogin(
                s, try await Self.sign(app, "RS256", #"{"userId": "\#(userId)", "exp": "+300", "aud": "shop-app"}"#))
            #expect(r.status == status, "\(userId): \(r.status) \(r.body)")
        }
        let asPassword = try await s.curl(
            "POST", "/auth", #"{"provider": "password", "data": "dana", "user_info": {"password": "anything-at-all"}}"#)
        #expect(asPassword.status == 401, "\(asPassword.body)")
        let passwd = try await s.cli(["user", "passwd", "dana", "--config", s.config], stdin: "a-new-password\n")
        #expect(passwd.status != 0 && passwd.stderr.contains("provider jwt"), "\(passwd.stderr)")

        // Sign-up is off here: registering is refused with what to do instead.
        let signUp = try await s.curl(
            "POST", "/auth",
            #"{"provider": "password", "data": "mallory", "user_info": {"password": "mallory-pass", "register": true}}"#
        )
        #expect(signUp.status == 403 && signUp.body.contains("realm-adapter user add"), "\(signUp.body)")
    }

    /// `server.jwt.isAdminValue`: the claim's value that makes an admin, a string here (one of
    /// an array of roles works too); any other value, or none, makes a plain user.
    @Test func isAdminValueNamesTheClaimValueOfAdmins() async throws {
        let keys = NSTemporaryDirectory() + "realm-adapter-jwt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let (app, appPublic) = try await Self.keyPair(keys, "app")
        let s = try await Server(
            server: #", "jwt": {"publicKeyFile": "\#(appPublic)", "isAdminFieldName": "role", "isAdminValue": "admin"}"#
        )
        try await s.start()
        for (user, role, admin) in [
            ("gus", #""admin""#, true), ("hal", #"["reader", "admin"]"#, true), ("ida", #""reader""#, false),
            ("jo", "true", false),
        ] {
            let token = try await Self.sign(app, "RS256", #"{"userId": "\#(user)", "role": \#(role), "exp": "+300"}"#)
            let r = try await Self.jwtLogin(s, token)
            #expect(r.body.contains(#""is_admin":\#(admin)"#), "\(user): \(r.body)")
        }
        let config = keys + "/object.json"
        try #"{"realm": {"store": "\#(keys)/store", "path": "/x"}, "schema": [], "#
            .appending(#""server": {"jwt": {"publicKeyFile": "x", "isAdminValue": {"x": 1}}}}"#)
            .write(toFile: config, atomically: true, encoding: .utf8)
        let refused = try await CLI.run(["user", "list", "--config", config])
        #expect(
            refused.status != 0 && refused.stderr.contains("server.jwt.isAdminValue: expected true, a string"),
            "\(refused.stderr)")
    }

    @Test func ecKeysAndMisconfigurationsSayWhatToFix() async throws {
        let keys = NSTemporaryDirectory() + "realm-adapter-jwt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let (ec, ecPublic) = try await Self.keyPair(keys, "ec", ec: true)
        let s = try await Server(server: #", "jwt": {"publicKeyFile": "\#(ecPublic)", "algorithm": "ES256"}"#)
        try await s.start()
        let r = try await Self.jwtLogin(s, try await Self.sign(ec, "ES256", #"{"userId": "fay", "exp": "+300"}"#))
        #expect(r.status == 200, "\(r.body)")

        // Without server.jwt, the provider is not there; a key that is not one stops serve at start.
        let plain = try await Server()
        try await plain.start()
        let off = try await Self.jwtLogin(plain, "x.y.z")
        #expect(off.status == 400 && off.body.contains("sets server.jwt"), "\(off.body)")
        try "not a key".write(toFile: keys + "/bad.pem", atomically: true, encoding: .utf8)
        let bad = try await Server(server: #", "jwt": {"publicKeyFile": "\#(keys)/bad.pem"}"#)
        let serve = try await bad.cli(["serve", "--config", bad.config])
        #expect(serve.status != 0 && serve.stderr.contains("server.jwt.publicKeyFile"), "\(serve.stderr)")
        let missing = try await Server(server: #", "jwt": {"publicKeyFile": "\#(keys)/none.pem"}"#)
        let noFile = try await missing.cli(["serve", "--config", missing.config])
        #expect(noFile.status != 0 && noFile.stderr.contains("cannot read"), "\(noFile.stderr)")
        let config = keys + "/hs.json"
        try #"{"realm": {"store": "\#(keys)/store", "path": "/x"}, "schema": [], "#
            .appending(#""server": {"jwt": {"publicKeyFile": "x", "#)
            .appending(#""algorithm": "HS256"}}}"#).write(toFile: config, atomically: true, encoding: .utf8)
        let alg = try await CLI.run(["user", "list", "--config", config])
        #expect(
            alg.status != 0 && alg.stderr.contains("server.jwt.algorithm: 'HS256' is not supported"), "\(alg.stderr)")
    }
}
