import ArgumentParser
import Foundation
import GRDBSQLite

/// The tables the loader benchmark loads, each with the same rows written to bare SQLite (the
/// write limit) and the `COPY` that reads them (the read limit).
enum LoadShape: String, CaseIterable, ExpressibleByArgument {
    /// One table of 8 mixed columns: the loader's typed fast path.
    case plain
    /// Purchases with two foreign keys (to customers and products), and each customer's ordered
    /// list of favourite products in a link table `(oid, idx, target)`.
    case linked

    /// Rows of each linked table, for `n` purchases.
    static func linkedCounts(_ n: Int) -> (customers: Int, products: Int, favorites: Int) {
        let customers = max(1, n / 10)
        return (customers, max(1, n / 100), customers * favoritesPerCustomer)
    }
    static let favoritesPerCustomer = 5

    /// Every row the load writes (in all tables) for `n`.
    func rows(_ n: Int) -> Int {
        switch self {
        case .plain: return n
        case .linked:
            let c = Self.linkedCounts(n)
            return n + c.customers + c.products + c.favorites
        }
    }

    func ddl(_ n: Int) -> String {
        switch self {
        case .plain:
            return """
                CREATE TABLE item (id bigint PRIMARY KEY, n bigint NOT NULL, label text NOT NULL, price double precision NOT NULL,
                                   active boolean NOT NULL, created timestamptz NOT NULL, code uuid NOT NULL, note text);
                INSERT INTO item SELECT i, i * 3, 'label ' || i, i * 1.5, i % 2 = 0, timestamptz '2026-01-01' - i * interval '1 second',
                                        md5(i::text)::uuid, CASE WHEN i % 5 = 0 THEN NULL ELSE 'note number ' || i END
                FROM generate_series(1, \(n)) i
                """
        case .linked:
            let c = Self.linkedCounts(n)
            return """
                CREATE TABLE customer (id bigint PRIMARY KEY, name text NOT NULL);
                CREATE TABLE product (id bigint PRIMARY KEY, label text NOT NULL);
                CREATE TABLE purchase (id bigint PRIMARY KEY, customer bigint NOT NULL REFERENCES customer (id),
                                       product bigint NOT NULL REFERENCES product (id), qty bigint NOT NULL, note text);
                CREATE TABLE customer_favorites (oid bigint NOT NULL REFERENCES customer (id), idx integer NOT NULL,
                                                 target bigint NOT NULL REFERENCES product (id), PRIMARY KEY (oid, idx));
                INSERT INTO customer SELECT i, 'customer ' || i FROM generate_series(1, \(c.customers)) i;
                INSERT INTO product SELECT i, 'product ' || i FROM generate_series(1, \(c.products)) i;
                INSERT INTO purchase SELECT i, 1 + i % \(c.customers), 1 + (i * 7) % \(c.products), i % 10,
                                            CASE WHEN i % 5 = 0 THEN NULL ELSE 'note ' || i END
                FROM generate_series(1, \(n)) i;
                INSERT INTO customer_favorites SELECT 1 + k / \(Self.favoritesPerCustomer), k % \(Self.favoritesPerCustomer),
                                                      1 + (k * 13) % \(c.products)
                FROM generate_series(0, \(c.favorites - 1)) k
                """
        }
    }

    var tables: [String] {
        switch self {
        case .plain: ["item"]
        case .linked: ["customer", "product", "purchase", "customer_favorites"]
        }
    }

    /// The `schema` and `mapping` members of the adapter's configuration.
    var configuration: String {
        switch self {
        case .plain:
            return """
                "schema": [{"name": "Item", "primaryKey": "id", "properties": {"id": "int", "n": "int", "label": "string",
                            "price": "double", "active": "bool", "created": "date", "code": "uuid", "note": "string?"}}],
                "mapping": {"tables": {"item": "Item"}}
                """
        case .linked:
            return """
                "schema": [{"name": "Customer", "primaryKey": "id", "properties": {"id": "int", "name": "string",
                                                                                  "favorites": "Product[]"}},
                           {"name": "Product", "primaryKey": "id", "properties": {"id": "int", "label": "string"}},
                           {"name": "Purchase", "primaryKey": "id", "properties": {"id": "int", "customer": "Customer",
                            "product": "Product", "qty": "int", "note": "string?"}}],
                "mapping": {"tables": {"customer": "Customer", "product": "Product", "purchase": "Purchase"}}
                """
        }
    }

    /// The same rows into plain SQLite tables, one prepared statement per table, one transaction
    /// (dates as nanoseconds and UUIDs as 16 bytes, as the store keeps them).
    func bareInsert(_ n: Int, file: String) throws -> Duration {
        let db = try BareSQLite(file: file)
        switch self {
        case .plain:
            try db.execute(
                """
                CREATE TABLE item (id INTEGER PRIMARY KEY, n INTEGER, label TEXT, price REAL, active INTEGER,
                                   created INTEGER, code BLOB, note TEXT)
                """)
            let base: Int64 = 1_767_225_600_000_000_000  // 2026-01-01 in nanoseconds
            return try ContinuousClock().measure {
                try db.transaction {
                    let item = try db.statement("INSERT INTO item VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
                    var uuid = [UInt8](repeating: 0, count: 16)
                    for k in 1...n {
                        let i = Int64(k)
                        item.int(1, i)
                        item.int(2, i * 3)
                        item.text(3, "label ", i)
                        item.double(4, Double(i) * 1.5)
                        item.int(5, i % 2 == 0 ? 1 : 0)
                        item.int(6, base - i * 1_000_000_000)
                        withUnsafeBytes(of: i.bigEndian) {
                            for j in 0..<8 {
                                uuid[j] = $0[j]
                                uuid[j + 8] = $0[7 - j]
                            }
                        }
                        item.blob(7, uuid)
                        if i % 5 == 0 { item.null(8) } else { item.text(8, "note number ", i) }
                        try item.step()
                    }
                }
            }
        case .linked:
            try db.execute(
                """
                CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT);
                CREATE TABLE product (id INTEGER PRIMARY KEY, label TEXT);
                CREATE TABLE purchase (id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER, qty INTEGER, note TEXT);
                CREATE TABLE customer_favorites (oid INTEGER, idx INTEGER, target INTEGER, PRIMARY KEY (oid, idx))
                    WITHOUT ROWID
                """)
            let c = Self.linkedCounts(n)
            let f = Int64(Self.favoritesPerCustomer)
            return try ContinuousClock().measure {
                try db.transaction {
                    let customer = try db.statement("INSERT INTO customer VALUES (?, ?)")
                    for i in 1...Int64(c.customers) {
                        customer.int(1, i)
                        customer.text(2, "customer ", i)
                        try customer.step()
                    }
                    let product = try db.statement("INSERT INTO product VALUES (?, ?)")
                    for i in 1...Int64(c.products) {
                        product.int(1, i)
                        product.text(2, "product ", i)
                        try product.step()
                    }
                    let purchase = try db.statement("INSERT INTO purchase VALUES (?, ?, ?, ?, ?)")
                    for i in 1...Int64(n) {
                        purchase.int(1, i)
                        purchase.int(2, 1 + i % Int64(c.customers))
                        purchase.int(3, 1 + (i * 7) % Int64(c.products))
                        purchase.int(4, i % 10)
                        if i % 5 == 0 { purchase.null(5) } else { purchase.text(5, "note ", i) }
                        try purchase.step()
                    }
                    let favorite = try db.statement("INSERT INTO customer_favorites VALUES (?, ?, ?)")
                    for k in 0..<Int64(c.favorites) {
                        favorite.int(1, 1 + k / f)
                        favorite.int(2, k % f)
                        favorite.int(3, 1 + (k * 13) % Int64(c.products))
                        try favorite.step()
                    }
                    // The indexes the store keeps for links (deleting an object finds what links
                    // to it), built after the rows as the load builds its own.
                    try db.execute(
                        """
                        CREATE INDEX purchase_customer ON purchase (customer);
                        CREATE INDEX purchase_product ON purchase (product);
                        CREATE INDEX customer_favorites_target ON customer_favorites (target)
                        """)
                }
            }
        }
    }
}

/// SQLite through its C API alone, for the write limit: WAL, `synchronous=NORMAL` (as a load's
/// store commits), statements prepared once.
final class BareSQLite {
    private var db: OpaquePointer?
    private var statements: [Statement] = []

    init(file: String) throws {
        guard sqlite3_open(file, &db) == SQLITE_OK else { throw ValidationError("cannot open bare SQLite at \(file)") }
        try execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
    }

    deinit {
        for s in statements { sqlite3_finalize(s.handle) }
        sqlite3_close(db)
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw ValidationError("bare SQLite: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    func transaction(_ body: () throws -> Void) throws {
        try execute("BEGIN")
        try body()
        try execute("COMMIT")
    }

    func statement(_ sql: String) throws -> Statement {
        var handle: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &handle, nil) == SQLITE_OK, let handle else {
            throw ValidationError("bare SQLite: \(String(cString: sqlite3_errmsg(db)))")
        }
        let s = Statement(handle)
        statements.append(s)
        return s
    }

    final class Statement {
        let handle: OpaquePointer
        /// Text built in place (no String per row), so the limit measures SQLite, not formatting.
        private var buffer = [UInt8](repeating: 0, count: 64)
        /// The prefix in `buffer` (copied again only when another one comes).
        private var prefixInBuffer: UnsafePointer<UInt8>?
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

        init(_ handle: OpaquePointer) { self.handle = handle }

        func int(_ column: Int32, _ v: Int64) { sqlite3_bind_int64(handle, column, v) }
        func double(_ column: Int32, _ v: Double) { sqlite3_bind_double(handle, column, v) }
        func null(_ column: Int32) { sqlite3_bind_null(handle, column) }
        func blob(_ column: Int32, _ bytes: [UInt8]) {
            sqlite3_bind_blob(handle, column, bytes, Int32(bytes.count), Self.transient)
        }

        /// Binds `prefix` followed by the decimal digits of `v` (v ≥ 0).
        func text(_ column: Int32, _ prefix: StaticString, _ v: Int64) {
            let p = prefix.utf8CodeUnitCount
            if prefixInBuffer != prefix.utf8Start {
                prefix.withUTF8Buffer { for (k, b) in $0.enumerated() { buffer[k] = b } }
                prefixInBuffer = prefix.utf8Start
            }
            var digits = 0
            var x = v
            repeat {
                digits += 1
                x /= 10
            } while x > 0
            x = v
            for k in stride(from: p + digits - 1, through: p, by: -1) {
                buffer[k] = UInt8(48 + x % 10)
                x /= 10
            }
            buffer.withUnsafeBufferPointer { b in
                b.withMemoryRebound(to: CChar.self) {
                    _ = sqlite3_bind_text(handle, column, $0.baseAddress, Int32(p + digits), Self.transient)
                }
            }
        }

        func step() throws {
            guard sqlite3_step(handle) == SQLITE_DONE else { throw ValidationError("bare SQLite insert failed") }
            sqlite3_reset(handle)
        }
    }
}
