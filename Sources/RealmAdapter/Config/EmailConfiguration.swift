import Foundation

/// `server.email`: the SMTP server `serve` mails password resets and address confirmations
/// through, and the public address the links in those mails point at.
///
/// ```json
/// "email": {"host": "smtp.example.com", "port": 587, "security": "starttls", "user": "realm",
///           "passwordEnv": "SMTP_PASSWORD", "from": "Shop <no-reply@example.com>",
///           "publicURL": "https://shop.example.com", "tokenLifetime": 3600}
/// ```
public struct EmailConfiguration: Sendable {
    /// How the connection to the SMTP server is protected.
    public enum Security: String, Sendable, CaseIterable {
        /// Plain text (a relay on the same machine or network only).
        case none
        /// Plain, then `STARTTLS` before anything is said (refused if the server does not offer it).
        case starttls
        /// TLS from the first byte (SMTPS, usually port 465).
        case tls
    }

    public var host: String
    /// Default: 25 with `none`, 587 with `starttls`, 465 with `tls`.
    public var port: Int
    public var security: Security
    /// The SMTP login (AUTH PLAIN), when the server wants one; its password from ``passwordEnv``.
    public var user: String?
    /// The environment variable holding the SMTP password (never the file).
    public var passwordEnv: String?
    /// The sender: an address, or `Name <address>`.
    public var from: String
    /// The server's address as users reach it (`https://shop.example.com`): links in mails start with it.
    public var publicURL: String
    /// How long a reset or confirmation token is good for (default 1 hour).
    public var tokenLifetime: Duration = .seconds(3600)
    /// A PEM file of the certificate authority the SMTP server's certificate is checked against,
    /// for a private one (default: the system's).
    public var caFile: String?

    public init(host: String, port: Int, security: Security = .none, from: String, publicURL: String) {
        self.host = host
        self.port = port
        self.security = security
        self.from = from
        self.publicURL = publicURL
    }

    init(_ r: inout JSONObjectReader) throws {
        host = try r.requiredString("host")
        let name = try r.string("security") ?? Security.starttls.rawValue
        guard let security = Security(rawValue: name) else {
            let all = Security.allCases.map(\.rawValue).joined(separator: ", ")
            throw r.error("security", "'\(name)' is not one of \(all).")
        }
        self.security = security
        let defaultPort =
            switch security {
            case .none: 25
            case .starttls: 587
            case .tls: 465
            }
        port = try r.int("port", in: 1...65535) ?? defaultPort
        user = try r.string("user")
        passwordEnv = try r.string("passwordEnv")
        if user != nil, passwordEnv == nil {
            throw r.error("passwordEnv", "is required with user: it names the variable holding the SMTP password.")
        }
        from = try r.requiredString("from")
        guard from.contains("@"), !from.contains(where: \.isNewline) else {
            throw r.error("from", "must be an address (no-reply@example.com, or Shop <no-reply@example.com>).")
        }
        let url = try r.requiredString("publicURL")
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
            throw r.error("publicURL", "must be the server's address as users reach it, like https://shop.example.com.")
        }
        publicURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        tokenLifetime = .seconds(try r.int("tokenLifetime", in: 60...604_800) ?? 3600)
        caFile = try r.string("caFile")
    }

    /// The SMTP password from the environment (nil without ``user``).
    public func password(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Secret? {
        guard user != nil, let variable = passwordEnv else { return nil }
        guard let value = environment[variable], !value.isEmpty else {
            throw RealmAdapterError(
                .invalidConfiguration,
                "server.email.passwordEnv: the environment variable \(variable) is not set; it holds the SMTP "
                    + "password of \(user ?? "the user").")
        }
        return Secret(value)
    }

    /// The bare address of ``from`` (what `MAIL FROM` says).
    public var fromAddress: String {
        if let open = from.lastIndex(of: "<"), let close = from.lastIndex(of: ">"), open < close {
            return String(from[from.index(after: open)..<close])
        }
        return from.trimmingCharacters(in: .whitespaces)
    }
}
