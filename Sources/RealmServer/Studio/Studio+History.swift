import Foundation
import Hummingbird
import RealmAdapter

/// A Realm's history: its transactions, newest first, paged.
extension Studio {
    /// `GET /studio/history?path=…&page=…`
    func history(_ session: StudioSession, _ query: [String: String]) throws -> Response {
        let path = try Self.required("path", query)
        let access = try access(session, path)
        guard try context(session, path).access().isUnrestricted else { throw StudioError.restrictedHistory(path) }
        let store = server.store
        let (version, kept) = (try store.version(of: path), try store.compactedThrough(path))
        let pager = StudioPager(
            total: Int(version - kept), query: query, link: "history", keep: ["path": path])
        // Newest first: the page's newest version, and the versions below it.
        let newest = version - Int64(pager.offset)
        let oldest = max(kept, newest - Int64(Self.pageSize))
        let transactions = try store.history(of: path, after: oldest, limit: Int(newest - oldest)).reversed()
        let rows: [[String: Any]] = transactions.map { t in
            let shown = t.instructions.prefix(Self.instructionsShown)
            return [
                "version": t.version, "origin": t.origin, "time": Self.time(t.committedAt),
                "position": t.sourcePosition.map { "\($0.source) \($0.position)" } ?? "",
                "count": t.instructions.count,
                "instructions": shown.map { $0.json(schema: access.schema).serialized() }.joined(separator: "\n"),
                "more": t.instructions.count > shown.count ? t.instructions.count - shown.count : false,
            ]
        }
        let values: [String: Any] = [
            "path": path, "realm": Self.link("realm", ["path": path]), "rows": rows, "pager": pager.values,
            "compacted": kept > 0 ? kept : false, "none": rows.isEmpty,
        ]
        return page(
            "History of \(path)", template: "history", values, session: session, live: Self.events(path),
            at: Self.link("history", ["path": path, "page": pager.shown].filter { !$0.value.isEmpty }))
    }

    /// The instructions shown of each transaction (the rest are counted).
    static let instructionsShown = 20
}
