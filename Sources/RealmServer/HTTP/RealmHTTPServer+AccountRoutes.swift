import Foundation
import Hummingbird
import RealmAdapter

extension RealmHTTPServer {
    /// The routes of users' accounts and of sharing: logging out, passwords, mailed resets and
    /// confirmations, lookups, permission offers, and Realms users create. A route asked with
    /// another method answers 405 saying which it takes.
    func addAccountRoutes(to router: Router<BasicRequestContext>, mail: AccountMail?, permissions: PermissionsEndpoint)
    {
        let account = tokens.map {
            AccountEndpoint(
                users: users, passwords: passwords, tokens: $0, mail: mail,
                requireConfirmation: configuration.requireEmailConfirmation)
        }
        let offers = tokens.map { OffersEndpoint(users: users, tokens: $0, permissions: permissions) }
        let pages = AccountPages(users: users)
        let realms = RealmsEndpoint(server: self, permissions: permissions)
        let routes: [(String, HTTPRequest.Method, @Sendable (Request, BasicRequestContext) async throws -> Response)] =
            [
                (
                    "auth/revoke", .post,
                    { r, _ in try await Self.enabled(account).revoke(r.headers[.authorization], try await Self.body(r))
                    }
                ),
                (
                    "auth/password", .put,
                    { r, _ in
                        try await Self.enabled(account).changePassword(
                            r.headers[.authorization], try await Self.body(r))
                    }
                ),
                (
                    "auth/password/updateAccount", .post,
                    { r, _ in try await Self.enabled(account).updateAccount(try await Self.body(r)) }
                ),
                ("auth/password/reset", .get, { r, _ in pages.resetForm(Self.formParameters(r.uri.query ?? "")) }),
                ("auth/password/reset", .post, { r, _ in await pages.reset(try await Self.body(r)) }),
                ("auth/confirm", .get, { r, _ in pages.confirmForm(Self.formParameters(r.uri.query ?? "")) }),
                ("auth/confirm", .post, { r, _ in pages.confirm(try await Self.body(r)) }),
                (
                    "auth/users/**", .get,
                    { r, c in
                        try await Self.enabled(account).lookUp(
                            r.headers[.authorization],
                            c.parameters.getCatchAll().map { $0.removingPercentEncoding ?? "" })
                    }
                ),
                (
                    "permissions/offers", .post,
                    { r, _ in try await Self.enabled(offers).create(r.headers[.authorization], try await Self.body(r)) }
                ),
                (
                    "permissions/offers", .get,
                    { r, _ in try await Self.enabled(offers).list(r.headers[.authorization]) }
                ),
                (
                    "permissions/offers/:token/accept", .post,
                    { r, c in
                        try await Self.enabled(offers).accept(
                            r.headers[.authorization], try c.parameters.require("token"))
                    }
                ),
                (
                    "permissions/offers/:token", .delete,
                    { r, c in
                        try await Self.enabled(offers).invalidate(
                            r.headers[.authorization], try c.parameters.require("token"))
                    }
                ),
                (
                    "realms/**", .post,
                    { r, c in
                        try await realms.create(
                            r, segments: c.parameters.getCatchAll().map(String.init), try await Self.body(r))
                    }
                ),
            ]
        for (path, method, handler) in routes {
            router.on(RouterPath(path), method: method) { request, context -> Response in
                await Self.answering { try await handler(request, context) }
            }
        }
        // Wrong methods: a 405 that says which the route takes, rather than a bare 404.
        var allowed = Dictionary(grouping: routes, by: \.0).mapValues { $0.map(\.1) }
        allowed["auth"] = [.post]
        allowed["permissions"] = [.post, .get]
        for (path, methods) in allowed {
            for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] where !methods.contains(method) {
                let names = methods.map(\.rawValue).joined(separator: " or ")
                router.on(RouterPath(path), method: method) { _, _ -> Response in
                    Self.error(405, "/\(path.replacingOccurrences(of: "/**", with: "/…")) takes \(names).")
                }
            }
        }
    }

    /// An endpoint that needs users, or the error that says there are none.
    static func enabled<T>(_ endpoint: T?) throws -> T {
        guard let endpoint else {
            throw ServerError(404, "Authentication is disabled (server.disableAuthentication): there are no users.")
        }
        return endpoint
    }
}
