import Foundation

/// A database connection string as users write it: a URL (`postgresql://user:pw@host:5432/db?sslmode=require`)
/// or libpq's `key=value` form (`host=db.example port=5432 dbname=app password='s3 cr3t'`).
///
/// It exists to keep the password out of everything printed: ``password`` takes it out and
/// ``withoutPassword`` is the same string without it, in the same form, for the connection
/// library (which gets the password on its own) and for messages.
public struct ConnectionString: Sendable, Equatable {
    /// The connection string with the password removed.
    public let withoutPassword: String
    /// The password it held, if any.
    public let password: String?
    public let host: String?
    public let port: Int?
    public let user: String?
    public let database: String?

    /// Parses `text`; throws `invalidConfiguration` (with the reason, never the text, which may
    /// hold a password) for anything that is neither form.
    public init(_ text: String) throws {
        if text.contains("://") {
            try self.init(url: text)
        } else {
            try self.init(keywords: text)
        }
    }

    private init(url text: String) throws {
        guard var parts = URLComponents(string: text), let scheme = parts.scheme,
            ["postgres", "postgresql", "sqlserver", "mssql", "sqlite"].contains(scheme.lowercased())
        else {
            throw RealmAdapterError.invalidConnectionString(
                "not a URL of the form postgresql://user@host:port/database")
        }
        // libpq reads the query's parameters too (`?host=…&password=…`), and they win over the
        // URL's other parts: the password comes out of it as well.
        let query = parts.queryItems ?? []
        func parameter(_ name: String) -> String? { query.last { $0.name == name }?.value }
        password = parameter("password") ?? parts.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 }
        parts.password = nil
        if query.contains(where: { $0.name == "password" }) {
            let rest = query.filter { $0.name != "password" }
            parts.queryItems = rest.isEmpty ? nil : rest
        }
        withoutPassword = parts.string ?? text
        host = parameter("host") ?? parts.host.flatMap { $0.isEmpty ? nil : $0 }
        let givenPort = try parameter("port").map { text in
            guard let p = Int(text) else { throw RealmAdapterError.invalidConnectionString("its port is not a number") }
            return p
        }
        guard (givenPort ?? parts.port).map({ (1...65535).contains($0) }) ?? true else {
            throw RealmAdapterError.invalidConnectionString("its port is not between 1 and 65535")
        }
        port = givenPort ?? parts.port
        user = parameter("user") ?? parts.user
        let name = parameter("dbname") ?? String(parts.path.drop { $0 == "/" })
        database = name.isEmpty ? nil : name
    }

    private init(keywords text: String) throws {
        let pairs = try Self.keywordPairs(text)
        guard !pairs.isEmpty else {
            throw RealmAdapterError.invalidConnectionString(
                "empty; give a URL (postgresql://user@host:port/database) or key=value pairs (host=… dbname=…)")
        }
        func value(_ key: String) -> String? { pairs.last { $0.key == key }?.value }
        password = value("password")
        withoutPassword = pairs.filter { $0.key != "password" }.map { "\($0.key)=\(Self.quoted($0.value))" }
            .joined(separator: " ")
        host = value("host") ?? value("hostaddr")
        guard value("port").map({ Int($0) != nil }) ?? true else {
            throw RealmAdapterError.invalidConnectionString("its port is not a number")
        }
        port = value("port").flatMap { Int($0) }
        user = value("user")
        database = value("dbname")
    }

    /// libpq's `key = value` pairs: values may be single-quoted, with `\'` and `\\` inside.
    static func keywordPairs(_ text: String) throws -> [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        var i = text.startIndex
        func skipSpaces() { while i < text.endIndex, text[i].isWhitespace { i = text.index(after: i) } }
        while true {
            skipSpaces()
            guard i < text.endIndex else { return pairs }
            let keyStart = i
            while i < text.endIndex, text[i].isLetter || text[i].isNumber || text[i] == "_" { i = text.index(after: i) }
            let key = String(text[keyStart..<i])
            skipSpaces()
            guard !key.isEmpty, i < text.endIndex, text[i] == "=" else {
                throw RealmAdapterError.invalidConnectionString(
                    "not a URL (postgresql://user@host:port/database) nor key=value pairs (host=… dbname=…)")
            }
            i = text.index(after: i)
            skipSpaces()
            var value = ""
            if i < text.endIndex, text[i] == "'" {
                i = text.index(after: i)
                var closed = false
                while i < text.endIndex {
                    let c = text[i]
                    i = text.index(after: i)
                    if c == "'" {
                        closed = true
                        break
                    }
                    if c == "\\", i < text.endIndex {
                        value.append(text[i])
                        i = text.index(after: i)
                        continue
                    }
                    value.append(c)
                }
                guard closed else { throw RealmAdapterError.invalidConnectionString("a quoted value is not closed") }
            } else {
                while i < text.endIndex, !text[i].isWhitespace {
                    if text[i] == "\\", text.index(after: i) < text.endIndex { i = text.index(after: i) }
                    value.append(text[i])
                    i = text.index(after: i)
                }
            }
            pairs.append((key, value))
        }
    }

    /// A value as libpq reads it back: quoted when empty or holding spaces, quotes or backslashes.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0.isWhitespace || $0 == "'" || $0 == "\\" }) else {
            return value
        }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

extension RealmAdapterError {
    /// `database.url` (or `init --database`) cannot be read; the text is not repeated (it may hold a password).
    static func invalidConnectionString(_ reason: String) -> RealmAdapterError {
        RealmAdapterError(.invalidConfiguration, "The connection string is \(reason).")
    }
}
