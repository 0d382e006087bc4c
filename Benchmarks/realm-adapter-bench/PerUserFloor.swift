import ArgumentParser
import Foundation
import GRDBSQLite

/// The physical limit of the per-user benchmark, measured in the same run: bare SQLite doing only
/// what gives each Realm its own objects, version and history, in the store's layout (a type's
/// table keyed by (realm, key), a `realm` row holding its version, one history row per Realm
/// transaction keyed by (realm, version)), and nothing of realm-adapter's (no Postgres, mapping,
/// instructions, cursors or notifications). Its one-Realm run against its many-Realm run says what
/// the per-Realm records cost by themselves.
struct PerUserFloor {
    var rows: Int
    var realms: Int
    var batch: Int
    var updates: Int
    var rounds: Int

    /// Loads the rows as the loader reads them (by owner), then applies the updates as the
    /// benchmark's Postgres transactions make them; returns rows/s and updates/s (median round).
    func measure(in directory: String) throws -> (load: Double, updates: Double) {
        let file = directory + "/floor.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        let db = try Bare(file)
        defer { db.close() }
        try db.exec(
            """
            PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
            CREATE TABLE realm (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, version INTEGER NOT NULL);
            CREATE TABLE history (id INTEGER PRIMARY KEY, realm_id INTEGER NOT NULL, version INTEGER NOT NULL,
                                  instructions BLOB NOT NULL, UNIQUE (realm_id, version));
            CREATE TABLE t (realm INTEGER NOT NULL, key NOT NULL, owner TEXT, title TEXT, done INTEGER,
                            PRIMARY KEY (realm, key)) WITHOUT ROWID;
            """)
        let find = try db.prepare("SELECT id, version FROM realm WHERE path = ?")
        let create = try db.prepare("INSERT INTO realm (path, version) VALUES (?, 1)")
        // Rows go in by statements of up to 32 rows, as the store's bulk inserts do.
        var inserts: [Int: OpaquePointer] = [:]
        func insert(rows: Int) throws -> OpaquePointer {
            if let s = inserts[rows] { return s }
            let values = Array(repeating: "(?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
            let s = try db.prepare("INSERT INTO t VALUES " + values)
            inserts[rows] = s
            return s
        }
        let update = try db.prepare("UPDATE t SET done = NOT done, title = title || '.' WHERE realm = ? AND key = ?")
        let record = try db.prepare("INSERT INTO history (realm_id, version, instructions) VALUES (?, ?, ?)")
        let bump = try db.prepare("UPDATE realm SET version = ? WHERE id = ?")

        /// One Realm's transaction: `body` writes its objects and returns its instructions' bytes.
        func commit(_ owner: Int, _ body: (Int64) throws -> [UInt8]) throws {
            var (id, version) = (Int64(0), Int64(0))
            let found = try db.step(find, [.text("/u\(owner)/todos")])
            if found {
                (id, version) = (sqlite3_column_int64(find, 0), sqlite3_column_int64(find, 1))
            } else {
                _ = try db.step(create, [.text("/u\(owner)/todos")])
                id = sqlite3_last_insert_rowid(db.handle)
            }
            sqlite3_reset(find)
            _ = try db.step(record, [.int(id), .int(version + 1), .blob(try body(id))])
            if found { _ = try db.step(bump, [.int(version + 1), .int(id)]) }
        }

        // The load: owners in the order Postgres sorts them, each owner's rows together. Only
        // SQLite's work is timed: each batch's values are made before its transaction begins.
        let owners = (0..<realms).sorted { "u\($0)".utf8.lexicographicallyPrecedes("u\($1)".utf8) }
        var pending: [Row] = []
        var titles: [UInt8] = []
        var loading = Duration.zero
        var bytes: [UInt8] = []
        func flush() throws {
            let started = ContinuousClock.now
            try db.exec("BEGIN")
            try titles.withUnsafeBufferPointer { titles in
                var start = 0
                while start < pending.count {
                    var end = start
                    while end < pending.count, pending[end].owner == pending[start].owner { end += 1 }
                    try commit(pending[start].owner) { realm in
                        bytes.removeAll(keepingCapacity: true)
                        var first = start
                        while first < end {
                            let rows = pending[first..<min(first + 32, end)]
                            try Self.insert(rows, realm: realm, titles: titles, with: try insert(rows: rows.count), db)
                            for row in rows {
                                withUnsafeBytes(of: row.id) { bytes += $0 }
                                bytes += titles[row.title]
                            }
                            first += rows.count
                        }
                        return bytes
                    }
                    start = end
                }
            }
            try db.exec("COMMIT")
            loading += ContinuousClock.now - started
            pending.removeAll(keepingCapacity: true)
            titles.removeAll(keepingCapacity: true)
        }
        for owner in owners {
            for id in stride(from: owner, to: rows, by: realms) {
                let start = titles.count
                titles += "todo number \(id)".utf8
                pending.append(Row(owner: owner, id: id, title: start..<titles.count))
                if pending.count == batch { try flush() }
            }
        }
        try flush()
        let load = Double(rows) / LoadBenchmark.seconds(loading)

        // The updates, as `PerUserBenchmark.updateRate` makes them: transactions of 100 rows.
        let spread = min(updates, realms)
        var rates: [Double] = []
        for _ in 0..<max(1, rounds) {
            let started = ContinuousClock.now
            for first in stride(from: 0, to: updates, by: 100) {
                let ids = (first..<min(first + 100, updates)).map { ($0 % spread) + ($0 / spread) * realms }
                try db.exec("BEGIN")
                for owner in Set(ids.map { $0 % realms }).sorted() {
                    try commit(owner) { realm in
                        var bytes: [UInt8] = []
                        for id in ids where id % realms == owner {
                            _ = try db.step(update, [.int(realm), .int(Int64(id))])
                            bytes += withUnsafeBytes(of: id) { Array($0) } + Array(".".utf8)
                        }
                        return bytes
                    }
                }
                try db.exec("COMMIT")
            }
            rates.append(Double(updates) / LoadBenchmark.seconds(ContinuousClock.now - started))
        }
        return (load, rates.percentile(0.5))
    }

    /// A row of the table: its owner (the Realm's), key and title (a range of a batch's buffer).
    struct Row {
        var owner: Int
        var id: Int
        var title: Range<Int>
    }

    /// Binds `rows` to `statement` (one of as many rows) and steps it. Text is bound in place:
    /// `titles` outlives the step.
    static func insert(
        _ rows: ArraySlice<Row>, realm: Int64, titles: UnsafeBufferPointer<UInt8>, with statement: OpaquePointer,
        _ db: Bare
    ) throws {
        for (k, row) in rows.enumerated() {
            let at = Int32(k * 5)
            sqlite3_bind_int64(statement, at + 1, realm)
            sqlite3_bind_int64(statement, at + 2, Int64(row.id))
            sqlite3_bind_text(statement, at + 3, "u\(row.owner)", -1, sqliteTransient)
            sqlite3_bind_text(
                statement, at + 4, titles.baseAddress! + row.title.lowerBound, Int32(row.title.count), nil)
            sqlite3_bind_int64(statement, at + 5, row.id % 3 == 0 ? 1 : 0)
        }
        _ = try db.step(statement, [])
    }

    /// A SQLite connection through the C API, as bare as it gets.
    final class Bare {
        let handle: OpaquePointer
        var statements: [OpaquePointer] = []

        enum Argument {
            case int(Int64)
            case text(String)
            case blob([UInt8])
        }

        init(_ file: String) throws {
            var handle: OpaquePointer?
            guard sqlite3_open(file, &handle) == SQLITE_OK, let handle else {
                throw ValidationError("cannot open \(file)")
            }
            self.handle = handle
        }

        func exec(_ sql: String) throws {
            guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
        }

        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
                let statement
            else { throw failure(sql) }
            statements.append(statement)
            return statement
        }

        /// Binds `arguments` and steps once: whether a row came (its columns are read before the
        /// next reset). A statement that gives no row is reset here.
        func step(_ statement: OpaquePointer, _ arguments: [Argument]) throws -> Bool {
            for (i, a) in arguments.enumerated() {
                let at = Int32(i + 1)
                switch a {
                case .int(let v): sqlite3_bind_int64(statement, at, v)
                case .text(let s): sqlite3_bind_text(statement, at, s, -1, sqliteTransient)
                case .blob(let b): sqlite3_bind_blob(statement, at, b, Int32(b.count), sqliteTransient)
                }
            }
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE:
                sqlite3_reset(statement)
                return false
            default:
                defer { sqlite3_reset(statement) }
                throw failure(String(cString: sqlite3_sql(statement)))
            }
        }

        func failure(_ sql: String) -> ValidationError {
            ValidationError("bare SQLite failed: \(String(cString: sqlite3_errmsg(handle))) in \(sql)")
        }

        func close() {
            for s in statements { sqlite3_finalize(s) }
            sqlite3_close(handle)
        }
    }
}

private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
