import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer
import ServiceLifecycle

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Fine-grained permissions against the same requests with permissions off.
struct PermissionsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permissions",
        abstract: "GraphQL under fine-grained permissions against the same requests on a Realm without them.",
        discussion: """
            Two Realms of the same 1,000 objects (id, title): /open without permission metadata, and \
            /acl with an ACL on every object (five roles, each with read and update; --users users, \
            each with their personal role, spread over the five roles). A user who is not an admin, \
            a member of one of the roles, sends over HTTP, one request at a time, alternating \
            between the two Realms request by request:
              query     { docs(take: 1000) { id title } }: the rate on /acl against /open (target ≥ 0.5)
              mutation  createDoc(updatePolicy: MODIFIED) of one object (the ACL checked in the \
            transaction): the checks' share of the mutation, 1 - open ÷ acl time (target < 0.2)
            """)

    @Option(help: "Requests of each kind to time.") var requests = 200
    @Option(help: "Users in the ACL Realm's roles.") var users = 10_000
    @Option(help: "Port to serve on.") var port = 19_490
    @Option(help: "Scratch directory (removed afterwards).") var scratch =
        NSTemporaryDirectory() + "realm-adapter-bench-permissions"

    static let roles = (0..<5).map { "role\($0)" }

    func run() async throws {
        try? FileManager.default.removeItem(atPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let store = try RealmStore(directory: scratch + "/store")
        let directory = try UserDirectory(storeDirectory: scratch + "/store")
        let reader = try directory.add(name: "reader", password: "reader-password")
        try fill(store, member: reader.id)
        var config = ServerConfiguration()
        config.port = port
        let tokens = await Tokens(key: Secret(String(repeating: "k", count: 40)), configuration: config)
        for path in ["/open", "/acl"] { try directory.grant(.write, on: path, to: nil) }
        let refresh = try await tokens.refreshToken(for: reader)
        var access: [String: String] = [:]
        for path in ["/open", "/acl"] {
            access[path] = try await tokens.accessToken(for: reader, path: path, level: .write, from: refresh.claims)
                .token
        }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let server = RealmHTTPServer(store: store, users: directory, tokens: tokens, configuration: config)
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: try server.service(logger: logger))], logger: logger))
        let serving = Task { try await group.run() }
        defer { serving.cancel() }
        let session = URLSession(configuration: .ephemeral)
        func post(_ path: String, _ query: String) async throws -> Data {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/graphql" + path)!)
            request.httpMethod = "POST"
            request.setValue(access[path], forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: ["query": query])
            let (data, response) = try await session.data(for: request)
            let text = String(decoding: data, as: UTF8.self)
            guard (response as? HTTPURLResponse)?.statusCode == 200, !text.contains("\"errors\"") else {
                throw ValidationError("the server answered \(text)")
            }
            return data
        }
        for _ in 0..<100 {
            if (try? await post("/open", "{ docs(take: 1) { id } }")) != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let page = "{ docs(take: 1000) { id title } }"
        for path in ["/open", "/acl"] {
            let n = try JSONSerialization.jsonObject(with: try await post(path, page)) as? [String: Any]
            guard ((n?["data"] as? [String: Any])?["docs"] as? [Any])?.count == 1_000 else {
                throw ValidationError("\(path) did not answer the 1,000 objects")
            }
        }
        print("realm-adapter permissions benchmark: \(requests) requests of each kind, one at a time, \(users) users")
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        // Request by request, alternating: drift on a shared machine (and the disk's flushes, for
        // the mutations) falls on both alike.
        var times: [String: Duration] = ["/open": .zero, "/acl": .zero]
        for i in 0..<(requests * 2) {
            let path = i % 2 == 0 ? "/open" : "/acl"
            let t0 = ContinuousClock.now
            _ = try await post(path, page)
            times[path]! += ContinuousClock.now - t0
        }
        let n = Double(requests)
        let (open, acl) = (seconds(times["/open"]!), seconds(times["/acl"]!))
        print(
            String(
                format: "  query of 1,000 objects   ACL %6.0f/s   no permissions %6.0f/s   ratio %.2f (target ≥ 0.5)",
                n / acl, n / open, open / acl))
        var writes: [String: Duration] = ["/open": .zero, "/acl": .zero]
        for i in 0..<(requests * 2) {
            let path = i % 2 == 0 ? "/open" : "/acl"
            let m =
                #"mutation { createDoc(input: {id: "d\#(i / 2 % 1_000)", title: "t\#(i)"}, "#
                + #"updatePolicy: MODIFIED) { id } }"#
            let t0 = ContinuousClock.now
            _ = try await post(path, m)
            writes[path]! += ContinuousClock.now - t0
        }
        let (openWrite, aclWrite) = (seconds(writes["/open"]!), seconds(writes["/acl"]!))
        print(
            String(
                format:
                    "  mutation (one object)    ACL %6.0f/s   no permissions %6.0f/s   checks %.0f%% (target < 20%%)",
                n / aclWrite, n / openWrite, max(0, 1 - openWrite / aclWrite) * 100))
        await group.triggerGracefulShutdown()
    }

    /// /open and /acl: the same documents; /acl with the metadata, the users and an ACL each.
    func fill(_ store: RealmStore, member: String) throws {
        let doc = ObjectSchema(
            name: "Doc", primaryKey: "id",
            properties: [Property(name: "id", type: .scalar(.string)), Property(name: "title", type: .scalar(.string))])
        try store.write(to: "/open", origin: "bench") { tx in
            try tx.addType(doc)
            for i in 0..<1_000 { try tx.create("Doc", ["id": .string("d\(i)"), "title": .string("doc \(i)")]) }
        }
        try store.write(to: "/acl", origin: "bench") { tx in
            try tx.enablePermissions()
            let acl = Property(name: "permissions", type: .list(.link(PermissionTypes.permission)))
            try tx.addType(ObjectSchema(name: "Doc", primaryKey: "id", properties: doc.properties + [acl]))
            let ids = (0..<users).map { String(format: "%032x", $0) } + [member]
            for id in ids {
                let personal = PermissionTypes.personalRole(of: id)
                try tx.create(PermissionTypes.role, ["name": .string(personal), "members": .list([])])
                try tx.create(PermissionTypes.user, ["id": .string(id), "role": .string(personal)])
                try tx.listAppend(PermissionTypes.role, .string(personal), "members", .string(id))
            }
            for (k, role) in Self.roles.enumerated() {
                let members = ids.enumerated().filter { $0.offset % Self.roles.count == k }.map { Value.string($0.1) }
                try tx.create(PermissionTypes.role, ["name": .string(role), "members": .list(members)])
            }
            for i in 0..<1_000 {
                var keys: [Value] = []
                for role in Self.roles {
                    var values: PropertyValues = ["role": .string(role)]
                    for n in Privileges.named {
                        values.append(n.property, .bool(n.privilege == .read || n.privilege == .update))
                    }
                    keys.append(try tx.create(PermissionTypes.permission, values))
                }
                try tx.create(
                    "Doc", ["id": .string("d\(i)"), "title": .string("doc \(i)"), "permissions": .list(keys)])
            }
        }
    }
}
