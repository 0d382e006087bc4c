import Foundation
import GRDB
import GRDBSQLite

/// The SQLite backend's connection: a GRDB `Database` inside a transaction of its pool.
struct SQLiteConnection: StoreConnection {
    let db: Database

    var dialect: any StoreDialect { SQLiteDialect() }
    var lifetime: AnyObject { db }

    func execute(sql: String, arguments: StoreArguments) throws {
        do {
            let values = try arguments.values.map { a in
                switch a {
                case .stored(let v): v.databaseValue
                case .value(let v), .key(let v): try RealmTables.encode(v).databaseValue
                }
            }
            try db.execute(sql: sql, arguments: StatementArguments(values))
        } catch let e as DatabaseError {
            throw StoreError(e)
        }
    }

    func cachedStatement(sql: String) throws -> any StoreStatement {
        do { return SQLiteStatement(statement: try db.cachedStatement(sql: sql), db: db) } catch let e as DatabaseError
        {
            throw StoreError(e)
        }
    }

    func makeStatement(sql: String) throws -> any StoreStatement {
        do { return SQLiteStatement(statement: try db.makeStatement(sql: sql), db: db) } catch let e as DatabaseError {
            throw StoreError(e)
        }
    }

    var changesCount: Int { db.changesCount }
    var lastInsertedRowID: Int64 { db.lastInsertedRowID }
}

extension StoredValue {
    /// The value as GRDB binds it.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let n): n.databaseValue
        case .real(let d): d.databaseValue
        case .text(let s): s.databaseValue
        case .blob(let d): d.databaseValue
        }
    }
}

extension StoreError {
    /// GRDB's error in the store's terms.
    init(_ e: DatabaseError) {
        let kind: Kind =
            switch e.resultCode {
            case .SQLITE_CONSTRAINT: .constraint
            case .SQLITE_BUSY, .SQLITE_LOCKED: .busy
            default: .failed
            }
        self.init(
            kind, code: "sqlite \(e.extendedResultCode.rawValue)",
            message: e.message ?? "SQLite error \(e.extendedResultCode.rawValue)")
    }

    /// Whether SQLite's error may come of another process making the store at the same instant
    /// (busy or locked, a migration recorded twice, a table or column that changed meanwhile).
    var isCollision: Bool {
        guard code.hasPrefix("sqlite "), let extended = Int32(code.dropFirst(7)) else { return false }
        let collisions: [ResultCode] = [
            .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_CONSTRAINT, .SQLITE_SCHEMA, .SQLITE_ERROR,
        ]
        return collisions.contains(ResultCode(rawValue: extended & 0xFF))
    }

    /// The error of SQLite's result code `rc` on `db`.
    init(sqlite rc: Int32, _ db: Database) {
        self.init(
            DatabaseError(
                resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection))))
    }
}
