import CLibPQ
import Foundation
import RealmAdapter

/// The Postgres connector's own members of the `database` section.
public struct PostgresOptions: ConnectorSettings, Hashable {
    /// SSL use, as libpq names it.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// `sslmode`: overrides the URL's.
    public var sslmode: SSLMode?
    /// Legacy `resetPostgresReplicationSlot`: drop and recreate the slot (starts over).
    public var resetReplicationSlot = false
    /// The logical replication slot (default `realm_adapter`).
    public var slotName = "realm_adapter"
    /// The publication (default `realm_adapter`).
    public var publication = "realm_adapter"
    /// `status` warns when the slot retains more WAL than this (default 1 GiB).
    public var walWarningBytes: Int64 = 1 << 30

    public init() {}

    init(_ r: inout JSONObjectReader) throws {
        // `validate` connects to nothing, but libpq's own parser tells a keyword it would refuse.
        if case .string(let url)? = r.members.first(where: { $0.key == "url" })?.value,
            let connection = try? ConnectionString(url), let refusal = Self.libpqRefusal(connection.withoutPassword)
        {
            throw r.error("url", "libpq refuses it: \(refusal).")
        }
        if let s = try r.string("sslmode") {
            guard let m = SSLMode(rawValue: s) else {
                let modes = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw r.error("sslmode", "unknown mode '\(s)' (expected \(modes)).")
            }
            sslmode = m
        }
        resetReplicationSlot = try r.bool("resetReplicationSlot") ?? false
        slotName = try r.string("slotName") ?? slotName
        // Postgres's own rule for slot names, checked before anything is created.
        guard Self.isPlainName(slotName) else {
            throw r.error(
                "slotName",
                "'\(slotName)' is not a replication slot name: "
                    + "use 1 to 63 lower-case letters, digits and underscores.")
        }
        publication = try r.string("publication") ?? publication
        // pgoutput reads publication_names as a list of identifiers: keep to names it reads back as they are.
        guard Self.isPlainName(publication) else {
            throw r.error(
                "publication",
                "'\(publication)' is not a publication name the replication stream "
                    + "reads back: use 1 to 63 lower-case letters, digits and underscores.")
        }
        walWarningBytes = Int64(try r.int("walWarningBytes", in: 0...Int64.max) ?? Int(walWarningBytes))
    }

    /// 1 to 63 lower-case ASCII letters, digits and underscores.
    /// Why libpq would not take `conninfo` (an unknown keyword or URL parameter, a syntax
    /// error), or nil; its message names the keyword, never a value. Nothing is connected to.
    static func libpqRefusal(_ conninfo: String) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &message) else {
            defer { message.map { PQfreemem($0) } }
            let text = message.map {
                String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self)
            }
            return text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "not a connection string"
        }
        PQconninfoFree(options)
        return nil
    }

    static func isPlainName(_ name: String) -> Bool {
        (1...63).contains(name.utf8.count)
            && name.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 95 }
    }

    public var summary: [String] {
        var out: [String] = []
        if slotName != "realm_adapter" { out.append("slot \(slotName)") }
        if publication != "realm_adapter" { out.append("publication \(publication)") }
        if let sslmode { out.append("sslmode \(sslmode.rawValue)") }
        if resetReplicationSlot { out.append("resetReplicationSlot") }
        return out
    }
}

extension DatabaseConfiguration {
    /// The Postgres members of the section (their defaults if it is another database's).
    public var postgres: PostgresOptions {
        get { settings as? PostgresOptions ?? PostgresOptions() }
        set { settings = newValue }
    }
}
