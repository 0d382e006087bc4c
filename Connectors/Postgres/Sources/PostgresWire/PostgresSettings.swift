import Foundation
import RealmAdapter

/// Where and how to connect, from the configuration's `database` section.
public struct PostgresSettings: Sendable {
    public var url: String?
    public var host: String?
    public var port: Int?
    public var user: String?
    public var password: Secret?
    public var database: String?
    public var sslmode: String?
    public var connectTimeout: Int = 10
    public var applicationName = "realm-adapter"

    public init(
        url: String? = nil, host: String? = nil, port: Int? = nil, user: String? = nil, password: Secret? = nil,
        database: String? = nil, sslmode: String? = nil, connectTimeout: Int = 10
    ) {
        self.url = url
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.sslmode = sslmode
        self.connectTimeout = connectTimeout
    }

    /// `host:port/database`, for messages (no credentials).
    public var displayTarget: String {
        let u = url.flatMap { try? ConnectionString($0) }
        let d = database ?? u?.database ?? ""
        return "\(host ?? u?.host ?? "localhost"):\(port ?? u?.port ?? 5432)" + (d.isEmpty ? "" : "/\(d)")
    }

    /// libpq keywords and values; the URL first, so that explicit fields override its parts.
    package func parameters(replication: Bool) -> [(String, String)] {
        var p: [(String, String)] = []
        if let url { p.append(("dbname", url)) }
        if let host { p.append(("host", host)) }
        if let port { p.append(("port", String(port))) }
        if let user { p.append(("user", user)) }
        if let password { p.append(("password", password.value)) }
        if let database { p.append(("dbname", database)) }
        if let sslmode { p.append(("sslmode", sslmode)) }
        p.append(("connect_timeout", String(connectTimeout)))
        p.append(("application_name", applicationName))
        // Unambiguous text formats for every value this connector reads or writes.
        p.append(
            (
                "options",
                "-c DateStyle=ISO -c TimeZone=UTC -c extra_float_digits=3 -c bytea_output=hex -c "
                    + "IntervalStyle=iso_8601 -c client_min_messages=warning"
            ))
        if replication { p.append(("replication", "database")) }
        return p
    }
}
