import Foundation
import GraphQL
import Hummingbird
import Logging
import Mustache
import RealmAdapter

/// Studio (`/studio`): the Realms, their objects and their history in a browser, for people who
/// would rather look than read. Server-rendered pages (Mustache, every value escaped) over what the
/// server has already: the store's reads and query engine, GraphQL's mutations with their checks,
/// and the user directory. No script runs inline; every form carries the session's CSRF token.
struct Studio: Sendable {
    let server: RealmHTTPServer
    let logger: Logger
    let templates: MustacheLibrary
    /// The CSRF token when the server checks no tokens: random for the process.
    let unauthenticatedCSRF: String
    /// Rows on a page of Realms, objects or history.
    static let pageSize = 50

    init(server: RealmHTTPServer, logger: Logger) throws {
        self.server = server
        self.logger = logger
        templates = try StudioTemplates.library()
        unauthenticatedCSRF = StudioSession.csrf(for: UUID().uuidString)
    }

    /// Every page is at `/studio/<name>`, one level down, so that the relative links of a page
    /// (and of one a form's answer shows) resolve alike, behind a proxy's prefix too.
    func addRoutes(to router: Router<BasicRequestContext>) {
        // `/studio/` and `/studio/realms/` would resolve a page's relative links one level down.
        router.get("studio") { request, _ in
            Response.redirect(to: request.uri.path.hasSuffix("/") ? "realms" : "studio/realms", type: .normal)
        }
        router.get("studio/assets/studio.css") { _, _ in StudioAssets.file(StudioAssets.stylesheet, "text/css") }
        router.get("studio/assets/studio.js") { _, _ in StudioAssets.file(StudioAssets.script, "text/javascript") }
        router.get("studio/login") { request, _ in await loginForm(request) }
        router.post("studio/login") { request, _ in await answering(request) { try await logIn(request) } }
        let pages: [(String, @Sendable (Request, StudioSession, [String: String]) async throws -> Response)] = [
            ("studio/realms", { r, s, q in try realms(r, s, q) }),
            ("studio/realm", { _, s, q in try realm(s, q) }),
            ("studio/objects", { _, s, q in try objects(s, q) }),
            ("studio/object", { _, s, q in try object(s, q, notice: q["saved"].map { "Saved \($0)." }) }),
            ("studio/history", { _, s, q in try history(s, q) }),
            ("studio/events", { _, s, q in try events(s, q) }),
            ("studio/sync", { _, s, _ in try await sync(s) }),
            ("studio/users", { _, s, q in try users(s, q) }),
            ("studio/models", { _, s, q in try models(s, q) }),
            ("studio/logs", { _, s, q in try logs(s, q) }),
            ("studio/roles", { _, s, q in try roles(s, q) }),
            ("studio/permissions", { _, s, q in try permissions(s, q) }),
        ]
        for (path, page) in pages {
            let name = String(path.dropFirst("studio/".count))
            router.get(RouterPath(path)) { request, _ in
                if request.uri.path.hasSuffix("/") {
                    return Response.redirect(
                        to: "../" + name + (request.uri.query.map { "?" + $0 } ?? ""), type: .normal)
                }
                return await answering(request) {
                    try await page(
                        request, try await session(request), RealmHTTPServer.formParameters(request.uri.query ?? ""))
                }
            }
        }
        let forms: [(String, @Sendable (Request, StudioSession, [String: String]) async throws -> Response)] = [
            ("studio/logout", { r, s, _ in try logOut(r, s) }),
            ("studio/object", { _, s, f in try await edit(s, f) }),
            ("studio/delete", { _, s, f in try await delete(s, f) }),
            ("studio/add-object", { _, s, f in try await add(s, f) }),
            ("studio/dead-letter", { _, s, f in try await deadLetter(s, f) }),
            ("studio/add-user", { _, s, f in try await changeUser("add", s, f) }),
            ("studio/remove-user", { _, s, f in try await changeUser("remove", s, f) }),
            ("studio/set-admin", { _, s, f in try await changeUser("admin", s, f) }),
            ("studio/set-password", { _, s, f in try await changeUser("password", s, f) }),
            ("studio/permissions", { _, s, f in try grant(s, f) }),
            ("studio/add-type", { _, s, f in try await changeSchema("type", s, f) }),
            ("studio/roles", { _, s, f in try await changeRoles(s, f) }),
            ("studio/object-permissions", { _, s, f in try await changeObjectPermissions(s, f) }),
            ("studio/add-property", { _, s, f in try await changeSchema("property", s, f) }),
        ]
        for (path, form) in forms {
            router.post(RouterPath(path)) { request, _ in
                await answering(request) {
                    let session = try await session(request)
                    let fields = RealmHTTPServer.formParameters(
                        String(decoding: try await RealmHTTPServer.body(request), as: UTF8.self))
                    guard session.accepts(csrf: fields["csrf"]) else { throw StudioError.forgedRequest }
                    return try await form(request, session, fields)
                }
            }
        }
    }

    /// The page `body` answers, or the page that says what went wrong: the login page for a
    /// session that no longer holds, an error page with the status and message otherwise.
    func answering(_ request: Request, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch StudioError.loggedOut(let why) {
            return loginPage(request, notice: why)
        } catch StudioError.forgedRequest {
            return errorPage(
                403,
                "This form was not sent from this session's Studio page (its CSRF token is missing or stale): "
                    + "reload the page and try again.")
        } catch let e as ServerError {
            return errorPage(e.status, e.message)
        } catch let e as RealmAdapterError {
            return errorPage(e.code == .realmNotFound ? 404 : 400, e.message)
        } catch let e as GraphQLError {
            return errorPage(400, e.message)
        } catch {
            // Not shown: it may hold the store's SQL or a driver's words.
            logger.error("Studio could not answer", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return errorPage(500, "Something went wrong on the server; its log says what (admins: the Logs page).")
        }
    }

    func errorPage(_ status: Int, _ message: String) -> Response {
        page(
            "Something went wrong", template: "message", ["message": message], session: nil, status: .init(code: status)
        )
    }

    /// A page: `template` rendered with `values`, inside the layout (with the session's name and
    /// its log-out form).
    func page(
        _ title: String, template: String, _ values: [String: Any], session: StudioSession?,
        notice: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:],
        live: String? = nil, at canonical: String? = nil, refreshDelay: Int = 150
    ) -> Response {
        let body = templates.render(values, withTemplate: template) ?? ""
        var layout: [String: Any] = [
            "title": title, "body": body, "live": live ?? false, "canonical": canonical ?? false, "delay": refreshDelay,
        ]
        if let session {
            layout["session"] = ["name": session.name, "isAdmin": session.isAdmin, "csrf": session.csrf]
        }
        if let notice { layout["notice"] = notice }
        if let error { layout["error"] = error }
        let html = templates.render(layout, withTemplate: "layout") ?? ""
        var all = StudioAssets.headers
        for field in headers { all.append(field) }
        return Response(status: status, headers: all, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
