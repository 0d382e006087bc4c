import Hummingbird
import Logging
import RealmAdapter

/// The Logs page (admins): the server process's recent log lines, newest first, by level.
extension Studio {
    /// `GET /studio/logs?level=warning`
    func logs(_ session: StudioSession, _ query: [String: String]) throws -> Response {
        try requireAdmin(session, "read the server's logs")
        let level = query["level"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        let lines = server.logs.lines(atLeast: level, limit: Self.logLinesShown).map { l in
            [
                "time": Self.time(l.time), "level": l.level.rawValue, "label": l.label, "message": l.message,
                "metadata": l.metadata,
            ]
        }
        let levels = Logger.Level.allCases.map { ["name": $0.rawValue, "selected": $0 == level] }
        let values: [String: Any] = ["lines": lines, "levels": levels, "none": lines.isEmpty]
        return page("Logs", template: "logs", values, session: session, live: Self.events(nil))
    }

    static let logLinesShown = 500
}
