import Foundation
import GRDB
import RealmAdapter

/// Reads a SQLite database's tables for `realm-adapter init` (`sqlite:///path/app.sqlite`); the
/// core's ``StartingConfiguration`` turns them into a configuration.
enum SQLiteIntrospection {
    /// The file of a `sqlite:///absolute/path` or `sqlite://relative/path` URL.
    static func file(of connection: ConnectionString) throws -> String {
        guard let parts = URLComponents(string: connection.withoutPassword), parts.scheme == "sqlite" else {
            throw SQLiteConnector.badURL("This is not a sqlite URL")
        }
        let file = (parts.host ?? "") + parts.path
        guard !file.isEmpty else {
            throw SQLiteConnector.badURL("The URL names no file")
        }
        return file
    }

    static func describe(file: String) throws -> DatabaseDescription {
        guard FileManager.default.fileExists(atPath: file) else {
            throw SQLiteConnector.fileMissing(file, createsIt: false)
        }
        var c = GRDB.Configuration()
        c.readonly = true
        let queue = try DatabaseQueue(path: file, configuration: c)
        let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        return try queue.read { db in
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                    AND name NOT LIKE 'realm\\_adapter\\_%' ESCAPE '\\' ORDER BY name
                    """)
            let tables = try names.map { try table($0, db) }
            return DatabaseDescription(name: name, schema: "main", tables: tables, file: file)
        }
    }

    static func table(_ name: String, _ db: Database) throws -> DatabaseDescription.Table {
        let key = try db.primaryKey(name)
        let rowidKey = key.rowIDColumn
        let columns = try db.columns(in: name).map { c in
            DatabaseDescription.Column(
                name: c.name, databaseType: c.type.isEmpty ? "(none)" : c.type, type: type(ofDeclared: c.type),
                isNullable: !c.isNotNull && c.name != rowidKey, isText: affinity(c.type) == .string,
                isGenerated: c.name == rowidKey)
        }
        let foreignKeys = try db.foreignKeys(on: name).compactMap { fk -> DatabaseDescription.ForeignKey? in
            guard fk.mapping.count == 1 else { return nil }
            return .init(
                column: fk.originColumns[0], table: fk.destinationTable, referencedColumn: fk.destinationColumns[0])
        }
        // A rowid table without a declared key has the hidden rowid: not a key init can map.
        return DatabaseDescription.Table(
            name: name, columns: columns, primaryKey: key.columns == ["rowid"] ? [] : key.columns,
            foreignKeys: foreignKeys)
    }

    /// SQLite's type affinity of a declared type, as a Realm type (nil for one it cannot tell).
    static func type(ofDeclared declared: String) -> DatabaseDescription.ColumnType? {
        let t = declared.uppercased()
        if t.contains("BOOL") { return .scalar(.bool) }
        if t.contains("DATE") || t.contains("TIME") { return .scalar(.date) }
        if t.contains("DECIMAL") || t.contains("NUMERIC") { return .scalar(.decimal) }
        if t.contains("UUID") { return .scalar(.uuid) }
        return affinity(declared).map(DatabaseDescription.ColumnType.scalar)
    }

    static func affinity(_ declared: String) -> ScalarType? {
        let t = declared.uppercased()
        if t.contains("INT") { return .int }
        if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") { return .string }
        if t.contains("BLOB") { return .data }
        if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") { return .double }
        return nil
    }
}
