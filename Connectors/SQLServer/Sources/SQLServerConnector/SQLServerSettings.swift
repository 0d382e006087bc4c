import Foundation
import RealmAdapter

/// Where and how to connect, from the configuration's `database` section.
public struct SQLServerSettings: Sendable, Hashable {
    public var host = "localhost"
    public var port: Int?
    public var user: String?
    public var password: Secret?
    public var database: String?
    public var options = SQLServerOptions()
    /// Seconds to wait for a login (`database.connectTimeout`).
    public var connectTimeout = 10
    public var applicationName = "realm-adapter"

    public init(
        host: String = "localhost", port: Int? = nil, user: String? = nil, password: Secret? = nil,
        database: String? = nil, options: SQLServerOptions = SQLServerOptions(), connectTimeout: Int = 10
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.options = options
        self.connectTimeout = connectTimeout
    }

    /// The section's members; a `url` (`sqlserver://user@host:1433/db`) fills what they leave out.
    public init(_ c: DatabaseConfiguration) throws {
        let url = try c.url.map { try ConnectionString($0) }
        self.init(
            host: c.host ?? url?.host ?? "localhost", port: c.port ?? url?.port, user: c.user ?? url?.user,
            password: c.password ?? url?.password.map(Secret.init), database: c.database ?? url?.database,
            options: c.sqlServer, connectTimeout: c.connectTimeout)
    }

    /// What a failed login may come from besides the address and the credentials: db-lib says
    /// only "Adaptive Server connection failed" when TLS fails on a certificate it cannot check
    /// (Babelfish's and SQL Server's own are self-signed), and a login without a password.
    var loginHints: [String] {
        var out: [String] = []
        if password == nil {
            out.append("No password was given: set the variable database.passwordEnv names (init: SQLSERVER_PASSWORD).")
        }
        if options.encryption != .off, !options.trustServerCertificate {
            out.append(
                "If the server's certificate is self-signed, TLS fails the same way: set trustServerCertificate "
                    + "(?trustServerCertificate=true in the URL), or caFile to its authority's certificate.")
        }
        return out
    }

    /// `host:port/database` or `host\instance/database`, for messages (no credentials).
    public var displayTarget: String {
        let place = options.instance.map { "\(host)\\\($0)" } ?? "\(host):\(port ?? 1433)"
        return place + (database.map { "/\($0)" } ?? "")
    }

    /// The section of FreeTDS's configuration that reaches this server: the only way db-lib
    /// takes TLS settings, and timeouts of one login's own. It holds no credentials.
    var freetdsSection: String {
        var lines = ["host = \(host)"]
        if let instance = options.instance {
            lines.append("instance = \(instance)")
        } else {
            lines.append("port = \(port ?? 1433)")
        }
        lines += ["tds version = 7.4", "client charset = UTF-8", "encryption = \(options.encryption.rawValue)"]
        // FreeTDS checks the certificate only when a CA file is set.
        if options.encryption != .off, !options.trustServerCertificate {
            lines.append("ca file = \(options.caFile ?? "system")")
            lines.append("check certificate hostname = yes")
        }
        lines.append("connect timeout = \(connectTimeout)")
        if options.queryTimeout > 0 { lines.append("timeout = \(options.queryTimeout)") }
        return lines.map { "    " + $0 }.joined(separator: "\n")
    }

    /// The name of ``freetdsSection`` in the configuration file: the same for the same server.
    var freetdsSectionName: String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for b in freetdsSection.utf8 { hash = (hash ^ UInt64(b)) &* 1_099_511_628_211 }
        return "realm_adapter_" + String(hash, radix: 16)
    }
}
