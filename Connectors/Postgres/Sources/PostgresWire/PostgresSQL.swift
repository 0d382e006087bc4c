import RealmAdapter

/// Quoting for the Postgres dialect: the one place identifiers and literals are quoted.
/// Values are never pasted into SQL; they travel as parameters. Literals are used only where
/// the protocol allows no parameter (replication commands, DDL options).
public enum PostgresSQL {
    /// `"name"`, with embedded quotes doubled.
    public static func quote(_ identifier: String) -> String {
        identifier.sqlQuoted("\"", "\"")
    }

    /// `schema.table`, each part quoted.
    public static func qualified(_ schema: String, _ table: String) -> String {
        quote(schema) + "." + quote(table)
    }

    /// Postgres cuts identifiers longer than this many bytes (`NAMEDATALEN - 1`).
    public static let maxIdentifierBytes = 63

    /// A name realm-adapter makes up (an index, a constraint) that fits in 63 bytes: longer ones
    /// keep a prefix and end in a hash of the whole, so the same long name always gives the same one.
    package static func shortened(_ name: String) -> String {
        guard name.utf8.count > maxIdentifierBytes else { return name }
        var prefix = ""
        for c in name where prefix.utf8.count + String(c).utf8.count <= maxIdentifierBytes - 9 { prefix.append(c) }
        let hex = String(UInt32(truncatingIfNeeded: fnv1a(name)), radix: 16)
        return prefix + "_" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// A stable 64-bit hash of a name (FNV-1a), for names and lock keys made from it.
    package static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for b in text.utf8 { hash = (hash ^ UInt64(b)) &* 1_099_511_628_211 }
        return hash
    }

    /// `'text'`, with embedded quotes doubled (standard_conforming_strings is on since 9.1).
    public static func literal(_ text: String) -> String {
        text.sqlQuoted("'", "'")
    }
}
