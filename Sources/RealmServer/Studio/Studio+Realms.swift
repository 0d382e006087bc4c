import Foundation
import Hummingbird
import RealmAdapter

/// The list of Realms (paged, searched by path) and one Realm's page (its types and schema).
extension Studio {
    /// `GET /studio/realms?q=…&page=…`: the Realms the session may read whose path contains `q`.
    func realms(_ request: Request, _ session: StudioSession, _ query: [String: String]) throws -> Response {
        let search = (query["q"] ?? "").trimmingCharacters(in: .whitespaces)
        var paths = try visiblePaths(session)
        if !search.isEmpty { paths = paths.filter { $0.range(of: search, options: .caseInsensitive) != nil } }
        let pager = StudioPager(total: paths.count, query: query, link: "realms", keep: ["q": search])
        let shown = Array(paths[pager.range])
        let rows: [[String: Any]] = try server.store.summaries(of: shown).map { s in
            // Counts in a Realm with fine-grained permissions are an admin's to see: they would
            // tell a user about objects hidden from them.
            let hidden = !session.isAdmin && s.counts.contains { PermissionTypes.isSystemType($0.type) }
            return [
                "path": s.path, "realmLink": Self.link("realm", ["path": s.path]), "version": s.version,
                "objects": hidden ? "—" : "\(s.counts.reduce(0) { $0 + $1.count })",
                "types": s.counts.filter { !PermissionTypes.isSystemType($0.type) }.map {
                    hidden ? $0.type : "\($0.type) \($0.count)"
                }.joined(separator: ", "),
                "changedAt": s.lastChange.map { Self.time($0.committedAt) } ?? "",
                "origin": s.lastChange?.origin ?? "",
            ]
        }
        let values: [String: Any] = [
            "q": search, "searched": !search.isEmpty, "total": paths.count, "plural": paths.count == 1 ? "" : "s",
            "realms": rows,
            "pager": pager.values, "none": rows.isEmpty,
        ]
        return page(
            "Realms", template: "realms", values, session: session, live: Self.events(nil),
            at: Self.link("realms", ["q": search, "page": pager.shown].filter { !$0.value.isEmpty }))
    }

    /// The paths the session may read, sorted: every Realm for an admin; otherwise the user's own
    /// directory and the paths granted to them or to everyone.
    func visiblePaths(_ session: StudioSession) throws -> [String] {
        let store = server.store
        guard let user = session.user, !user.isAdmin else { return try store.realmPaths() }
        // What GET /permissions lists too; a grant may name a path no Realm has yet.
        let own = try store.realmPaths(under: "/\(user.id)")
        return try server.users.reachable(by: user, ownRealms: own).map(\.path).filter {
            try user.owns($0) || store.contains($0)
        }
    }

    /// `GET /studio/realm?path=…`: the Realm's types with their counts and properties.
    func realm(
        _ session: StudioSession, _ query: [String: String], notice: String? = nil, error: String? = nil
    ) throws -> Response {
        let path = try Self.required("path", query)
        let access = try access(session, path)
        let summary = try server.store.summaries(of: [path]).first
        let counts = Dictionary(uniqueKeysWithValues: (summary?.counts ?? []).map { ($0.type, $0.count) })
        // Fine-grained permissions: only the types the viewer may read, without counts (objects
        // hidden from them would be counted).
        let privileges = try context(session, path).access()
        let shownTypes = access.schema.types.filter { privileges.privileges(ofType: $0.name).contains(.read) }
        let types: [[String: Any]] = shownTypes.map { t in
            [
                "typeName": t.name, "objectsLink": Self.link("objects", ["path": path, "type": t.name]),
                "count": privileges.isUnrestricted ? "\(counts[t.name] ?? 0)" : "—", "primaryKey": t.primaryKey ?? "",
                "properties": t.properties.map { p in
                    [
                        "property": p.name, "propertyType": p.typeString, "indexed": p.isIndexed,
                        "primary": p.name == t.primaryKey,
                    ]
                },
            ]
        }
        let values: [String: Any] = [
            "path": path, "version": summary?.version ?? 0, "types": types, "noTypes": types.isEmpty,
            "history": Self.link("history", ["path": path]), "csrf": session.csrf,
            "manages": access.level == .manage, "typeNames": shownTypes.map(\.name),
            "rolesLink": Self.link("roles", ["path": path]),
            "models": ModelLanguage.allCases.map {
                ["language": $0.rawValue, "modelsLink": Self.link("models", ["path": path, "language": $0.rawValue])]
            },
            // Mustache takes only false (not "") for no section.
            "changedAt": summary?.lastChange.map { Self.time($0.committedAt) } ?? false,
            "origin": summary?.lastChange?.origin ?? "",
        ]
        return page(
            path, template: "realm", values, session: session, notice: notice, error: error,
            status: error == nil ? .ok : .badRequest, live: Self.events(path), at: Self.link("realm", ["path": path]))
    }

    /// What the session may do with the Realm at `path`: its level, and the Realm's schema.
    /// A user who may not read it is told so whether or not it exists.
    func access(_ session: StudioSession, _ path: String) throws -> (level: AccessLevel, schema: Schema) {
        try RealmPath.validate(path)
        let level = try session.user.map { try server.users.level(of: $0, at: path) } ?? .manage
        guard level >= .read else { throw StudioError.notAllowed(path) }
        guard try server.store.contains(path) else { throw ServerError.noRealm(path) }
        return (level, try server.store.schema(of: path))
    }

    /// A link to a Studio page with `parameters`, percent-encoded (the template escapes it for HTML).
    static func link(_ page: String, _ parameters: [String: String]) -> String {
        let query = parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.encode($0.value))" }
        return query.isEmpty ? page : page + "?" + query.joined(separator: "&")
    }

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .studioUnreserved) ?? ""
    }

    static func required(_ name: String, _ query: [String: String]) throws -> String {
        guard let value = query[name], !value.isEmpty else { throw StudioError.missing(name) }
        return value
    }

    /// A time as Studio shows it: UTC, to the second.
    static func time(_ t: Timestamp) -> String {
        let s = t.iso8601
        return s.count >= 19 ? String(s.prefix(19)).replacingOccurrences(of: "T", with: " ") + " UTC" : s
    }
}

extension CharacterSet {
    /// What a URL query's value may hold as is (RFC 3986's unreserved characters).
    static let studioUnreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// Which rows a page shows (`page`, from 1), and the links to its neighbours.
struct StudioPager {
    let total: Int
    let page: Int
    let pages: Int
    let values: [String: Any]

    init(total: Int, query: [String: String], link: String, keep: [String: String]) {
        self.total = total
        pages = max(1, (total + Studio.pageSize - 1) / Studio.pageSize)
        page = min(max(1, Int(query["page"] ?? "") ?? 1), pages)
        func to(_ p: Int) -> String {
            Studio.link(link, keep.filter { !$0.value.isEmpty }.merging(["page": "\(p)"]) { $1 })
        }
        var v: [String: Any] = ["page": page, "pages": pages]
        if page > 1 { v["previous"] = to(page - 1) }
        if page < pages { v["next"] = to(page + 1) }
        values = v
    }

    var offset: Int { (page - 1) * Studio.pageSize }
    /// The page as an address names it: nothing for the first.
    var shown: String { page > 1 ? "\(page)" : "" }
    var range: Range<Int> { min(offset, total)..<min(offset + Studio.pageSize, total) }
}
