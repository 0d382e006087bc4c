/// A table as a store copy (``RealmStore/copy(to:progress:)``) moves it from one backend to
/// another: its columns, each read and bound as what it holds, and the columns rows are ordered
/// by (its primary key), so that it is read a page at a time, never all in memory.
package struct CopiedTable: Sendable {
    package enum Column: Sendable {
        /// Integers, text and bytes, which every backend keeps alike.
        case plain(String)
        /// Realm values of a property's column, of the registry's storage kind (`INTEGER`, `REAL`,
        /// `TEXT`, `BLOB`): bound by the value rule, as the store writes them.
        case value(String, kind: String)
        /// A column of keys (a type's key, a link, a list's owner), bound as keys.
        case key(String)

        package var name: String {
            switch self {
            case .plain(let n), .value(let n, _), .key(let n): n
            }
        }
    }

    package let name: String
    package let columns: [Column]
    /// The columns that order the rows and tell each from the others.
    package let orderedBy: [String]
    /// The column whose values the table generates (`id`), if any: it goes on after the copied rows.
    package let generated: String?

    package init(_ name: String, _ columns: [Column], orderedBy: [String], generated: String? = nil) {
        self.name = name
        self.columns = columns
        self.orderedBy = orderedBy
        self.generated = generated
    }

    /// A table of plain columns.
    package init(_ name: String, plain columns: [String], orderedBy: [String], generated: String? = nil) {
        self.init(name, columns.map(Column.plain), orderedBy: orderedBy, generated: generated)
    }

    /// The table's name in SQL (`user` is a keyword).
    var quoted: String { "\"\(name)\"" }

    /// The first page of rows, or the page after a row's `orderedBy` values.
    func selectPage(after: Bool, limit: Int) -> String {
        let names = columns.map(\.name).joined(separator: ", ")
        let order = orderedBy.joined(separator: ", ")
        let marks = orderedBy.map { _ in "?" }.joined(separator: ", ")
        let condition = after ? " WHERE (\(order)) > (\(marks))" : ""
        return "SELECT \(names) FROM \(quoted)\(condition) ORDER BY \(order) LIMIT \(limit)"
    }

    /// An INSERT of `rows` rows.
    func insert(rows: Int) -> String {
        let row = "(" + columns.map { _ in "?" }.joined(separator: ", ") + ")"
        let names = columns.map(\.name).joined(separator: ", ")
        return "INSERT INTO \(quoted) (\(names)) VALUES " + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// A column read from the source, as the target binds it.
    func argument(_ stored: StoredValue, column: Int, source: any StoreDialect) -> StoreArgument {
        switch columns[column] {
        case .plain: return .stored(stored)
        case .value(_, let kind): return .value(RealmTables.decode(stored, as: Self.scalar(ofKind: kind)))
        case .key:
            let key = source.storedKey(stored)
            switch key {
            case .integer: return .key(RealmTables.decode(key, as: .int))
            case .text: return .key(RealmTables.decode(key, as: .string))
            default: return .key(RealmTables.decode(key, as: .data))
            }
        }
    }

    /// A scalar type the registry's storage kind keeps, whose values read back as they were stored.
    private static func scalar(ofKind kind: String) -> ScalarType {
        switch kind {
        case "INTEGER": .int
        case "REAL": .double
        case "TEXT": .string
        default: .data
        }
    }
}
