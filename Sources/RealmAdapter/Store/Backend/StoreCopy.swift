import Foundation

/// A copy of tables from one store's backend to another's (``RealmStore/copy(to:progress:)``,
/// and the server's tables): one snapshot of the source is read on a thread of its own (a
/// backend's connection serves only the thread it runs on), a page of rows at a time, and
/// handed to the thread that writes them into the target inside the target's transaction.
/// Each value is read and bound as its column holds it (``CopiedTable``): the same on any pair
/// of backends.
package final class StoreCopy: @unchecked Sendable {
    // @unchecked: `pending` and `copied` are used by the writing thread only; the reading
    // thread owns nothing but what it hands over through `queue`.

    /// Rows read from the source at a time.
    static let pageSize = 1_000

    private enum Item {
        /// The next table, and the number of rows the source has in it.
        case table(CopiedTable, rows: Int)
        /// A page of the table's rows, as the target binds them.
        case rows([[StoreArgument]])
    }

    private let queue = BoundedQueue<Item>(capacity: 4)
    private let readerDone = DispatchSemaphore(value: 0)
    private var pending: Item?
    /// The tables written so far, each with the number of rows its source has.
    private var copied: [(table: CopiedTable, rows: Int)] = []

    /// Starts reading, in one snapshot of `source`, the tables that `tables` names (given that
    /// snapshot). Call ``close()`` once done.
    package init(
        from source: any StoreBackend, tables: @escaping @Sendable (any StoreConnection) throws -> [CopiedTable]
    ) {
        let (queue, done) = (self.queue, readerDone)
        let reader = Thread {
            do {
                try source.read { db in
                    for t in try tables(db) {
                        try queue.put(.table(t, rows: try Self.count(t, in: db)))
                        try Self.readPages(of: t, from: db) { try queue.put(.rows($0)) }
                    }
                }
                queue.finish()
            } catch {
                queue.finish(error)
            }
            done.signal()
        }
        reader.stackSize = 4 << 20
        reader.start()
    }

    /// Stops the reading thread (if it is not done) and waits for it to end its snapshot.
    package func close() {
        queue.cancel()
        readerDone.wait()
    }

    /// Writes into `target` the rows of the next `count` tables read, or of every table left;
    /// `progress` is told each table's name and the rows written so far.
    /// - Throws: the source's errors as well as the target's.
    package func write(tables count: Int? = nil, into target: any StoreConnection, progress: (String, Int) -> Void)
        throws
    {
        var written = 0
        while count.map({ written < $0 }) ?? true {
            guard case .table(let t, let rows)? = try next() else { return }
            var inserted = 0
            progress(t.name, 0)
            while let item = try next() {
                guard case .rows(let page) = item else {
                    pending = item
                    break
                }
                try Self.insert(page, into: t, target)
                inserted += page.count
                progress(t.name, inserted)
            }
            copied.append((t, rows))
            written += 1
        }
    }

    /// The next item read (the one looked at and left first), or nil at the end.
    private func next() throws -> Item? {
        if let item = pending {
            pending = nil
            return item
        }
        return try queue.take()
    }

    /// The tables written and their numbers of rows, once each holds in `db` (the target, its
    /// copy committed) as many rows as its source did.
    /// - Throws: `storeUnavailable`, naming the first table whose count differs.
    package func verify(in db: any StoreConnection) throws -> [(table: String, rows: Int)] {
        for (t, expected) in copied {
            let found = try Self.count(t, in: db)
            if found != expected {
                throw RealmAdapterError.copyCountsDiffer(table: t.name, source: expected, target: found)
            }
        }
        return copied.map { ($0.table.name, $0.rows) }
    }

    /// Makes the generated column of each table written go on after the rows copied into it.
    package func continueGenerated(in db: any StoreConnection) throws {
        for (t, _) in copied {
            if let column = t.generated, let sql = db.dialect.generatedFollowing(t.name, column: column) {
                try db.execute(sql: sql)
            }
        }
    }

    // MARK: Tables

    /// Throws `invalidState`, naming the table, if any of `tables` holds a row in `db`, the
    /// target named `target` (a copy goes only to an empty store).
    package static func requireEmpty(_ tables: [CopiedTable], in db: any StoreConnection, target: String) throws {
        for t in tables where try Int64.fetchOne(db, sql: "SELECT 1 FROM \(t.quoted) LIMIT 1") != nil {
            throw RealmAdapterError.copyTargetNotEmpty(target, table: t.name)
        }
    }

    private static func count(_ table: CopiedTable, in db: any StoreConnection) throws -> Int {
        Int(try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(table.quoted)") ?? 0)
    }

    /// Reads every row of `table`, a page at a time in the order of its key, each as the target binds it.
    private static func readPages(
        of table: CopiedTable, from db: any StoreConnection, _ page: ([[StoreArgument]]) throws -> Void
    ) throws {
        let order = table.orderedBy.map { name in table.columns.firstIndex { $0.name == name }! }
        var last: [StoredValue]?
        while true {
            let select = try db.cachedStatement(sql: table.selectPage(after: last != nil, limit: pageSize))
            let rows = try StoreRow.fetchAll(select, arguments: StoreArguments((last ?? []).map { .stored($0) }))
            if rows.isEmpty { return }
            try page(
                rows.map { row in
                    row.values.indices.map { table.argument(row.values[$0], column: $0, source: db.dialect) }
                })
            guard rows.count == pageSize else { return }
            last = order.map { rows[rows.count - 1].values[$0] }
        }
    }

    /// Inserts a page of rows, several to a statement.
    private static func insert(_ rows: [[StoreArgument]], into table: CopiedTable, _ db: any StoreConnection) throws {
        let perInsert = max(1, min(100, 900 / table.columns.count))
        var i = 0
        while i < rows.count {
            let n = min(perInsert, rows.count - i)
            let insert =
                n == perInsert
                ? try db.cachedStatement(sql: table.insert(rows: n)) : try db.makeStatement(sql: table.insert(rows: n))
            try insert.execute(arguments: StoreArguments(rows[i..<i + n].flatMap { $0 }))
            i += n
        }
    }
}
