import Foundation
import TestSupport
import Testing

/// Sharing between users, as the legacy clients did it: a user creates a Realm under their own
/// path by giving its schema, offers a level on it (a token, with an expiry), another accepts
/// it; offers are listed and withdrawn; `GET /permissions` lists what a user may reach.
@Suite(.serialized) struct ServeSharingTests {
    typealias Server = ServeTests.Server

    static let notes = #"""
        {"schema": [{"type": "ADD_TYPE", "object_type": "Note", "primary_key": "id",
                     "properties": {"id": "int", "text": "string"}}]}
        """#

    static func offer(_ s: Server, _ token: String, _ path: String, _ level: String, expires: String? = nil)
        async throws -> (status: Int, body: String)
    {
        let expiresAt = expires.map { #""\#($0)""# } ?? "null"
        return try await s.curl(
            "POST", "/permissions/offers",
            #"{"realmPath": "\#(path)", "accessLevel": "\#(level)", "expiresAt": \#(expiresAt)}"#, token: token)
    }

    @Test func aUserSharesARealmTheyCreatedThroughAnOffer() async throws {
        let s = try await Server()
        try await s.start()
        let (bob, carol) = (try await s.login("bob"), try await s.login("carol"))

        // bob creates /~/notes by giving its schema; adding a type later is fine, a Realm
        // elsewhere is not his to create, and a schema change that is not additive is refused.
        let created = try await s.curl("POST", "/realms/~/notes", Self.notes, token: bob)
        #expect(created.status == 200 && created.body.contains(#""created":true"#), "\(created.body)")
        let path = try Server.field(created.body, "path")
        let bobId = String(path.dropFirst().prefix(32))
        #expect(path == "/\(bobId)/notes")
        let added = try await s.curl(
            "POST", "/realms/~/notes",
            #"{"schema": [{"type": "ADD_PROPERTIES", "object_type": "Note", "properties": {"done": "bool?"}}]}"#,
            token: bob)
        #expect(added.status == 200 && added.body.contains(#""created":false"#), "\(added.body)")
        // The same schema again (as a client gives it at every launch) commits nothing.
        let same = try await s.curl("POST", "/realms/~/notes", Self.notes, token: bob)
        #expect(same.body.contains(#""version":2,"created":false,"changed":false"#), "\(same.body)")
        // Twenty requests racing to create one Realm: one says it created it (a probe saw two).
        let (url, notes) = (s.url + "/realms/~/race", Self.notes)
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await ChildProcess.run(
                        "/usr/bin/curl", ["-s", "-X", "POST", url, "-H", "Authorization: \(bob)", "-d", notes]
                    ).stdout
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(answers.filter { $0.contains(#""created":true"#) }.count == 1, "\(answers)")
        // Who may is decided before the body is read.
        let anonymous = try await s.curl("POST", "/realms/~/notes", "{not json")
        #expect(anonymous.status == 401, "\(anonymous.body)")
        let elsewhere = try await s.curl("POST", "/realms/shared/notes", Self.notes, token: bob)
        #expect(elsewhere.status == 403 && elsewhere.body.contains("only under their own path"), "\(elsewhere.body)")
        let objects = try await s.curl(
            "POST", "/realms/~/notes",
            #"{"schema": [{"type": "INSERT", "object_type": "Note", "identity": 1, "values": {"id": 1}}]}"#, token: bob)
        #expect(objects.status == 400 && objects.body.contains("schema[0]"), "\(objects.body)")
        let changed = try await s.curl(
            "POST", "/realms/~/notes",
            #"{"schema": [{"type": "ADD_TYPE", "object_type": "Note", "primary_key": "id", "#
                + #""properties": {"id": "string"}}]}"#,
            token: bob)
        #expect(changed.status == 400, "\(changed.body)")
        let bobAccess = try await s.access(bob, path).get()
        let create = #"mutation { createNote(input: {id: 1, text: "milk"}) { id } }"#
        #expect(try await s.graphQL(path, bobAccess, create) == #"{"data": {"createNote": {"id": 1}}}"#)

        // carol has nothing there until she accepts bob's offer of write.
        guard case .failure = try await s.access(carol, path) else {
            Issue.record("carol reached bob's Realm without an offer")
            return
        }
        let offered = try await Self.offer(s, bob, "realms://127.0.0.1/~/notes", "write")
        #expect(offered.status == 200, "\(offered.body)")
        let token = try Server.field(offered.body, "token")
        #expect(token.count == 64)
        let accepted = try await s.curl("POST", "/permissions/offers/\(token)/accept", token: carol)
        #expect(accepted.status == 200 && accepted.body.contains(path), "\(accepted.body)")
        let carolAccess = try await s.access(carol, path).get()
        #expect(
            try await s.graphQL(path, carolAccess, #"mutation { createNote(input: {id: 2, text: "eggs"}) { id } }"#)
                == #"{"data": {"createNote": {"id": 2}}}"#)
        let listed = try await s.curl("GET", "/permissions", token: carol)
        #expect(listed.body.contains(#"{"path":"\#(path)","accessLevel":"write""#), "\(listed.body)")

        // Offers only add: a later offer of read leaves carol's write.
        let read = try Server.field(try await Self.offer(s, bob, path, "read").body, "token")
        #expect(try await s.curl("POST", "/permissions/offers/\(read)/accept", token: carol).status == 200)
        #expect(try await s.curl("GET", "/permissions", token: carol).body.contains(#""accessLevel":"write""#))

        // Never above the creator's level; bob lists his offers (ids, never tokens), carol has none.
        let shop = try await Self.offer(s, bob, "/shop", "read")
        #expect(shop.status == 403, "\(shop.body)")
        let mine = try await s.curl("GET", "/permissions/offers", token: bob)
        #expect(mine.body.contains(path) && !mine.body.contains(token), "\(mine.body)")
        // An offer's creation time reads the same in every answer (the list had cut it to seconds).
        let createdAt = try Server.field(offered.body, "createdAt")
        #expect(mine.body.contains(#""createdAt":"\#(createdAt)""#), "\(createdAt) \(mine.body)")
        #expect(try await s.curl("GET", "/permissions/offers", token: carol).body.contains(#""offers":[]"#))

        // Withdrawn: refused to whoever comes next, and only its creator withdraws it.
        let dave = try await s.cli(["user", "add", "dave", "--config", s.config], stdin: "dave-password\n")
        #expect(dave.status == 0)
        let daveToken = try await s.login("dave")
        let withdrawn = try Server.field(try await Self.offer(s, bob, path, "read").body, "token")
        let byCarol = try await s.curl("DELETE", "/permissions/offers/\(withdrawn)", token: carol)
        #expect(byCarol.status == 404, "\(byCarol.body)")
        #expect(try await s.curl("DELETE", "/permissions/offers/\(withdrawn)", token: bob).status == 200)
        let late = try await s.curl("POST", "/permissions/offers/\(withdrawn)/accept", token: daveToken)
        #expect(late.status == 410 && late.body.contains("withdrawn"), "\(late.body)")

        // Expired, and unknown.
        let soon = Date().addingTimeInterval(2)
        let expiring = try await Self.offer(s, bob, path, "read", expires: ISO8601DateFormatter().string(from: soon))
        #expect(expiring.status == 200, "\(expiring.body)")
        try await Task.sleep(for: .seconds(3))
        let expired = try await s.curl(
            "POST", "/permissions/offers/\(try Server.field(expiring.body, "token"))/accept", token: daveToken)
        #expect(expired.status == 410 && expired.body.contains("expired"), "\(expired.body)")
        let unknown = try await s.curl(
            "POST", "/permissions/offers/\(String(repeating: "0", count: 64))/accept", token: daveToken)
        #expect(unknown.status == 404, "\(unknown.body)")
        let past = try await Self.offer(s, bob, path, "read", expires: "2001-01-01T00:00:00Z")
        #expect(past.status == 400 && past.body.contains("past"), "\(past.body)")
        guard case .failure = try await s.access(daveToken, path) else {
            Issue.record("dave reached bob's Realm through a withdrawn or expired offer")
            return
        }

        // The CLI: an operator's offer, accepted for a user; listed with its state.
        let cliOffer = try await s.cli(["permission", "offer", "create", "/shop", "read", "--config", s.config])
        #expect(cliOffer.status == 0, "\(cliOffer.stderr)")
        let cliToken = cliOffer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let cliAccept = try await s.cli([
            "permission", "offer", "accept", cliToken, "--user", "dave", "--config", s.config,
        ])
        #expect(cliAccept.status == 0 && cliAccept.stdout.contains("dave has read"), "\(cliAccept.stderr)")
        #expect((try? await s.access(daveToken, "/shop").get()) != nil)
        let all = try await s.cli(["permission", "offer", "list", "--config", s.config]).stdout
        // A lifetime past any date crashed the command; an operator has no /~/.
        let huge = try await s.cli([
            "permission", "offer", "create", "/shop", "read", "--expires-in", "9223372036854775807", "--config",
            s.config,
        ])
        #expect(huge.status != 0 && huge.stderr.contains("ten years"), "\(huge.stderr)")
        let tilde = try await s.cli(["permission", "offer", "create", "/~/x", "read", "--config", s.config])
        #expect(tilde.status != 0 && tilde.stderr.contains("own directory"), "\(tilde.stderr)")
        #expect(all.contains("withdrawn") && all.contains("expired") && all.contains("open"), "\(all)")

        // What each user may reach: bob his Realm (admin), dave /shop; an admin asks for anyone.
        let bobs = try await s.curl("GET", "/permissions?recipient=currentUser", token: bob)
        #expect(bobs.body.contains(#"{"path":"\#(path)","accessLevel":"admin""#), "\(bobs.body)")
        let asAdmin = try await s.curl("GET", "/permissions?user=dave", token: try await s.login("alice"))
        #expect(asAdmin.body.contains(#"{"path":"/shop","accessLevel":"read""#), "\(asAdmin.body)")
        let notAdmin = try await s.curl("GET", "/permissions?user=dave", token: bob)
        #expect(notAdmin.status == 403, "\(notAdmin.body)")
    }
}
