import Foundation
import RealmAdapter

/// The SQL Server connector's own members of the `database` section.
public struct SQLServerOptions: ConnectorSettings, Hashable {
    /// TLS on the connection, as FreeTDS's `encryption` setting names it.
    public enum Encryption: String, Sendable, CaseIterable {
        /// Never (the server may still refuse a login without it).
        case off
        /// If the server offers it (FreeTDS's default with TDS 7.4; it may cover only the login).
        case request
        /// Always: the connection fails if the server does not encrypt.
        case require
    }

    /// How the connector learns of the database's changes.
    public enum ChangeCapture: String, Sendable, CaseIterable {
        /// SQL Server's change tracking (`ALTER DATABASE … SET CHANGE_TRACKING = ON`).
        case tracking
        /// Triggers the connector installs, appending to a change log (``SQLServerTriggers``):
        /// where change tracking is unavailable (Babelfish) or may not be turned on.
        case triggers
    }

    /// `changeCapture`; nil: change tracking, or triggers where the server has no change
    /// tracking (chosen when the connector first connects, and logged).
    public var changeCapture: ChangeCapture?
    /// A named instance (`SQLEXPRESS`), found through the SQL Browser service instead of a port.
    public var instance: String?
    /// `encryption` (default `request`).
    public var encryption = Encryption.request
    /// `trustServerCertificate`: accept the server's certificate without checking it (a
    /// self-signed certificate in development). Otherwise it is checked against ``caFile``.
    public var trustServerCertificate = false
    /// `caFile`: the PEM file of the certificate authorities to check the server's certificate
    /// against (default: the system's).
    public var caFile: String?
    /// `queryTimeout`: seconds to wait for the server's answer to a statement (0: no limit).
    public var queryTimeout = 0
    /// `pollIntervalMs`: how often each table's change tracking is read (default 1,000 ms;
    /// legacy `adapterPollingPeriod`).
    public var pollIntervalMs = 1000
    /// `trackingName`: names this daemon's place in the database, as a replication slot does in
    /// Postgres: its writes' change-tracking context, its resume point and its lock (default
    /// `realm_adapter`). Two daemons that sync one database with different configurations need
    /// different names.
    public var trackingName = "realm_adapter"

    public init() {}

    /// - Parameter url: the URL's query parameters `encryption` and `trustServerCertificate`
    ///   (what `init --database` was given) stand where the members are absent.
    init(_ r: inout JSONObjectReader, port: Int?, url: [URLQueryItem] = []) throws {
        instance = try r.string("instance")
        if let instance {
            guard !instance.isEmpty, instance.unicodeScalars.allSatisfy(Self.nameCharacters.contains) else {
                throw r.error(
                    "instance", "give the instance's name alone (SQLEXPRESS): letters, digits, '_', '$' and '-'.")
            }
            guard port == nil else {
                throw r.error(
                    "instance", "give either a port or an instance: the SQL Browser service finds an instance's port.")
            }
        }
        if let e = try r.string("encryption") ?? url.last(where: { $0.name == "encryption" })?.value {
            guard let mode = Encryption(rawValue: e) else {
                let modes = Encryption.allCases.map(\.rawValue).joined(separator: ", ")
                throw r.error("encryption", "unknown mode '\(e)' (expected \(modes)).")
            }
            encryption = mode
        }
        trustServerCertificate =
            try r.bool("trustServerCertificate")
            ?? (url.last { $0.name == "trustServerCertificate" }?.value == "true")
        caFile = try r.string("caFile")
        if let caFile, caFile.isEmpty || caFile.unicodeScalars.contains(where: Self.breaksALine) {
            throw r.error("caFile", "give the path of a PEM file, on one line.")
        }
        if caFile != nil, trustServerCertificate {
            throw r.error("caFile", "a certificate is either checked against caFile or trusted: not both.")
        }
        queryTimeout = try r.int("queryTimeout", in: 0...86_400) ?? queryTimeout
        pollIntervalMs = try r.int("pollIntervalMs", in: 10...3_600_000) ?? pollIntervalMs
        if let c = try r.string("changeCapture") {
            guard let mode = ChangeCapture(rawValue: c) else {
                let modes = ChangeCapture.allCases.map(\.rawValue).joined(separator: ", ")
                throw r.error("changeCapture", "unknown mode '\(c)' (expected \(modes)).")
            }
            changeCapture = mode
        }
        trackingName = try r.string("trackingName") ?? trackingName
        guard (1...100).contains(trackingName.utf8.count) else {
            throw r.error("trackingName", "give a name of 1 to 100 bytes.")
        }
    }

    /// What an instance name may hold: it goes into FreeTDS's configuration file as it is.
    static let nameCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_$-"))

    /// A character that would end a line, or start a comment, in FreeTDS's configuration file.
    static func breaksALine(_ c: Unicode.Scalar) -> Bool {
        c.value < 0x20 || c.value == 0x7F || c == ";" || c == "#" || c == "\u{2028}" || c == "\u{2029}"
    }

    /// A host name or address as FreeTDS reads it: letters, digits, `.`, `-`, `_` and `:`.
    static func checkHost(_ host: String, at member: String, _ r: inout JSONObjectReader) throws {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-_:"))
        guard !host.isEmpty, host.unicodeScalars.allSatisfy({ $0.isASCII && allowed.contains($0) }) else {
            throw r.error(
                member,
                "'\(host.unicodeScalars.map { $0.value < 0x20 ? "?" : String($0) }.joined())' is not a "
                    + "host name or address (letters, digits, '.', '-', '_' and ':').")
        }
    }

    public var summary: [String] {
        var out: [String] = []
        if let instance { out.append("instance \(instance)") }
        if encryption != .request { out.append("encryption \(encryption.rawValue)") }
        if trustServerCertificate { out.append("trustServerCertificate") }
        if queryTimeout > 0 { out.append("queryTimeout \(queryTimeout) s") }
        if pollIntervalMs != 1000 { out.append("pollIntervalMs \(pollIntervalMs)") }
        if let changeCapture { out.append("changeCapture \(changeCapture.rawValue)") }
        if trackingName != "realm_adapter" { out.append("trackingName \(trackingName)") }
        return out
    }
}

extension DatabaseConfiguration {
    /// The SQL Server members of the section (their defaults if it is another database's).
    public var sqlServer: SQLServerOptions {
        get { settings as? SQLServerOptions ?? SQLServerOptions() }
        set { settings = newValue }
    }
}
