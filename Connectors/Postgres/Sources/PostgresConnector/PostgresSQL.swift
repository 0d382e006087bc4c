/// Quoting for the Postgres dialect: the one place identifiers and literals are quoted.
/// Values are never pasted into SQL; they travel as parameters. Literals are used only where
/// the protocol allows no parameter (replication commands, DDL options).
public enum PostgresSQL {
    /// `"name"`, with embedded quotes doubled.
    public static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `schema.table`, each part quoted.
    public static func qualified(_ schema: String, _ table: String) -> String {
        quote(schema) + "." + quote(table)
    }

    /// `'text'`, with embedded quotes doubled (standard_conforming_strings is on since 9.1).
    public static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
