import PostgresWire
import RealmAdapter

/// The Postgres backend's connection, as the store sees it inside one of the backend's
/// transactions: statements prepared once per connection, kept by their SQL.
///
/// A transaction's BEGIN is not sent on its own: it waits (``lead``) and goes with the first
/// statement, in its round trip, as do the writes whose outcome nothing waits for
/// (``StoreStatement/runDeferred()``) with the next statement or the COMMIT. A read
/// transaction's COMMIT is sent without waiting for its answer, which is read before the
/// connection's next use (``settle()``).
final class PostgresStoreConnection: StoreConnection, @unchecked Sendable {
    // @unchecked: used only on its libpq connection's queue (inside `sessionSync`), which the
    // backend hands to one transaction at a time.
    let session: PostgresSession
    /// Whether a write transaction is open (its INSERTs and UPDATEs then run in savepoints).
    var inWriteTransaction = false
    var changesCount = 0
    /// What waits to go with the next statement: the statements that begin the transaction,
    /// until the first is sent, and writes whose outcome nothing waits for.
    var lead: [PostgresPipelined] = []
    /// Whether anything of the transaction was sent.
    var sentAny = false
    /// The error of the transaction's first round trip (the one that carried its BEGIN), when
    /// the connection was found broken then: the transaction never began.
    var leadLost: StoreError?
    /// Whether something was sent whose answer is still to be read.
    private var unsettled = false
    private var cache: [String: PostgresStoreStatement] = [:]
    var lifetime: AnyObject { self }

    init(session: PostgresSession) { self.session = session }

    var dialect: any StoreDialect { PostgresStoreDialect() }

    func execute(sql: String, arguments: StoreArguments) throws {
        guard arguments.values.isEmpty else {
            return try makeStatement(sql: sql).execute(arguments: arguments)
        }
        // Several statements, or one without parameters: as they are, in one round trip.
        try withLead { lead in
            try sendAlone(lead)
            try session.execute(PostgresPlaceholders.numbered(sql))
        }
    }

    func cachedStatement(sql: String) throws -> any StoreStatement {
        if let s = cache[sql] { return s }
        if cache.count >= 500 { cache.removeAll() }
        let s = PostgresStoreStatement(sql: sql, session: session, connection: self)
        cache[sql] = s
        return s
    }

    func makeStatement(sql: String) throws -> any StoreStatement {
        PostgresStoreStatement(sql: sql, session: session, connection: self)
    }

    /// The value the last INSERT took from a table's identity column in this session.
    var lastInsertedRowID: Int64 {
        let text =
            (try? withLead {
                try sendAlone($0)
                return try session.query("SELECT lastval()")
            })?.rows.first?.first ?? nil
        return text.flatMap { Int64($0) } ?? 0
    }

    /// Runs `send`, which sends to the server: first the statements of ``lead``, which it is
    /// given (and which are then no longer waiting), in the same round trip as its own.
    func withLead<T>(_ send: ([PostgresPipelined]) throws -> T) throws -> T {
        settle()
        let lead = self.lead
        self.lead = []
        // Only the transaction's first round trip can find that it never began: a later one
        // that breaks leaves a transaction the server rolls back, and the process's own
        // bookkeeping of it to the store's caller.
        let beginning = !sentAny
        sentAny = true
        do { return try send(lead) } catch let failed as PostgresLeadFailure {
            let error = StoreError(heldBack: failed.error)
            if beginning, failed.error.code == .connectionLost { leadLost = error }
            throw error
        } catch let e as PostgresError {
            let error = StoreError(e)
            if beginning, e.code == .connectionLost { leadLost = error }
            // Nothing of the lead ran (it could not be sent, say): it goes with the next statement.
            // The transaction counts as begun all the same: a body that goes on after this
            // failure is refused at its end unless its transaction is open then.
            if beginning, session.transactionState == .none { self.lead = lead }
            throw error
        }
    }

    /// Sends `lead` in a round trip of its own (before a statement that cannot take it along).
    func sendAlone(_ lead: [PostgresPipelined]) throws {
        guard !lead.isEmpty else { return }
        do { try session.run(lead) } catch let e as PostgresError { throw PostgresLeadFailure(error: e) }
    }

    /// Sends what waits, if anything, in a round trip of its own.
    func flush() throws { try withLead(sendAlone) }

    /// Holds back a write whose outcome nothing waits for, until the next statement or the end;
    /// a long queue goes at once.
    func holdBack(_ statement: PostgresPipelined) throws {
        lead.append(statement)
        if lead.count >= Self.longestLead { try flush() }
    }

    /// At most this many statements wait (a load of many Realms defers a history row for each).
    static let longestLead = 64

    /// Sends a read-only transaction's COMMIT without waiting for its answer.
    func commitWithoutWaiting() {
        unsettled = session.send("COMMIT")
        if !unsettled { _ = try? session.execute("COMMIT") }  // a connection lost is found at its next use
    }

    /// Reads what was sent without waiting, so the connection can be used again.
    func settle() {
        guard unsettled else { return }
        session.settle()
        unsettled = false
    }
}

extension StoreError {
    /// The failure of a statement held back (the BEGIN, a write nothing waited for), found at
    /// a later round trip: it fails the transaction whatever its kind, and is never a constraint
    /// that the caller of the statement it went with could take for its own and go on from.
    init(heldBack e: PostgresError) {
        self.init(e)
        if kind == .constraint { kind = .failed }
    }
}
