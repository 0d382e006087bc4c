import CLibPQ

/// A statement sent in a pipeline ahead of another: its text, parameters and their types.
package struct PostgresPipelined: Sendable {
    package var sql: String
    package var parameters: [PostgresParameter?]
    package var types: [UInt32]

    package init(_ sql: String, parameters: [PostgresParameter?] = [], types: [UInt32] = []) {
        (self.sql, self.parameters, self.types) = (sql, parameters, types)
    }
}

/// The failure of a statement sent ahead in a pipeline
/// (``PostgresSession/query(_:parameters:types:after:inSavepoint:)``): the statement that follows
/// did not run.
package struct PostgresLeadFailure: Error {
    package var error: PostgresError
    package init(error: PostgresError) { self.error = error }
}

extension PostgresSession {
    /// Runs one statement in one round trip with what must come before and after it, in
    /// libpq's pipeline mode: `lead` (statements that the caller held back until now, as a
    /// transaction's BEGIN, or writes whose outcome nothing waited for), then, when
    /// `inSavepoint`, a savepoint, the statement (prepared the first time its text is seen on
    /// this connection, as ``pipeline(_:endsGroup:)`` does) and the savepoint's release.
    ///
    /// When the statement fails inside its savepoint, the transaction is rolled back to the
    /// savepoint (one more round trip) and goes on; the statement's error is thrown. For a caller
    /// that expects some statements to fail (a key already there) without losing its
    /// transaction, as SQLite undoes a failed statement alone. When one of `lead` fails, it is
    /// thrown as ``PostgresLeadFailure`` and the statement did not run.
    package func query(
        _ sql: String, parameters: [PostgresParameter?], types: [UInt32], after lead: [PostgresPipelined],
        inSavepoint: Bool
    ) throws -> PostgresResult {
        let result = try pipelined(
            lead, then: PostgresPipelined(sql, parameters: parameters, types: types), inSavepoint: inSavepoint)
        guard let result else {
            throw PostgresError.statementFailed(PostgresError.libpqMessage(handle), lost: false, query: sql)
        }
        return result
    }

    /// Runs `statements` in one round trip, in libpq's pipeline mode; the first failure is thrown.
    package func run(_ statements: [PostgresPipelined]) throws {
        do { _ = try pipelined(statements, then: nil, inSavepoint: false) } catch let e as PostgresLeadFailure {
            throw e.error
        }
    }

    private func pipelined(_ lead: [PostgresPipelined], then statement: PostgresPipelined?, inSavepoint: Bool)
        throws -> PostgresResult?
    {
        let sql = statement?.sql ?? lead.last?.sql ?? ""
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError.statementFailed(PostgresError.libpqMessage(handle), lost: false, query: sql)
        }
        var exited = false
        defer { if !exited { PQexitPipelineMode(handle) } }
        // By text and parameter types: a statement is prepared with the types of its first run.
        // Only a statement in a savepoint (an INSERT, repeated in shapes the store bounds);
        // another runs unnamed, as `query(_:parameters:types:)` runs it.
        let key = sql + "\u{1}" + (statement?.types ?? []).map(String.init).joined(separator: ",")
        var name = inSavepoint ? connection.prepared[key] : nil
        var new: String?
        if inSavepoint, name == nil, connection.prepared.count < Self.maxPrepared {
            new = connection.nextPreparedName()
            name = new
        }
        let before = lead + (inSavepoint ? [PostgresPipelined("SAVEPOINT statement")] : [])
        let after = inSavepoint ? [PostgresPipelined("RELEASE SAVEPOINT statement")] : []
        // libpq copies each statement's parameters as it is queued: they need live only as long.
        func send(_ s: PostgresPipelined) throws -> Bool {
            try withParameters(s.parameters) { count, values, lengths, formats in
                guard s.types.count == s.parameters.count, !s.types.isEmpty else {
                    return PQsendQueryParams(handle, s.sql, count, nil, values, lengths, formats, 0) == 1
                }
                return PQsendQueryParams(handle, s.sql, count, s.types, values, lengths, formats, 0) == 1
            }
        }
        func sendStatement(_ s: PostgresPipelined) throws -> Bool {
            let count = Int32(s.parameters.count)
            if let new, PQsendPrepare(handle, new, s.sql, count, s.types) != 1 { return false }
            guard let name else { return try send(s) }
            return try withParameters(s.parameters) { count, values, lengths, formats in
                PQsendQueryPrepared(handle, name, count, values, lengths, formats, 0) == 1
            }
        }
        let sent =
            try before.allSatisfy(send) && (try statement.map(sendStatement) ?? true) && after.allSatisfy(send)
            && PQpipelineSync(handle) == 1
        guard sent else {
            throw PostgresError.statementFailed(
                PostgresError.libpqMessage(handle), lost: PQstatus(handle) != CONNECTION_OK, query: sql)
        }
        // The results in order: the lead, the savepoint, the preparation (if any), the
        // statement, the release; after a failure, the rest are PGRES_PIPELINE_ABORTED. Then
        // the sync.
        let statementStep = before.count + (new == nil ? 0 : 1)
        let steps = statement == nil ? lead.count : statementStep + 1 + after.count
        var failure: (error: Error, step: Int)?
        var result: PostgresResult?
        for step in 0..<steps {
            let text =
                step < lead.count ? lead[step].sql : (before.count...statementStep).contains(step) ? sql : "SAVEPOINT"
            while let r = PQgetResult(handle) {
                do {
                    let read = try PostgresResult(r, connection: handle, sql: text)
                    if step == statementStep, statement != nil { result = read }
                    if let new, step == statementStep - 1 { connection.prepared[key] = new }
                } catch  where failure == nil {
                    failure = (error, step)
                } catch {}
            }
        }
        if let sync = PQgetResult(handle) { PQclear(sync) }  // PGRES_PIPELINE_SYNC
        PQexitPipelineMode(handle)
        exited = true
        if var failure {
            // A server that ended the connection sent its reason first: read before libpq saw the end.
            if var e = failure.error as? PostgresError, PQstatus(handle) != CONNECTION_OK {
                e.code = .connectionLost
                failure.error = e
            }
            if failure.step < lead.count, let e = failure.error as? PostgresError {
                throw PostgresLeadFailure(error: e)
            }
            // Past the lead, the savepoint was made: the failure is undone alone.
            if inSavepoint, failure.step >= before.count { _ = try? query("ROLLBACK TO SAVEPOINT statement") }
            throw failure.error
        }
        return result
    }

    /// Sends statements without parameters and returns at once, their results left unread:
    /// ``settle()`` reads them, and must be called before the connection is used again.
    /// For a statement whose outcome nothing waits for (a read-only transaction's COMMIT).
    /// - Returns: whether they were sent (a broken connection is found out by its next use).
    @discardableResult
    package func send(_ sql: String) -> Bool { PQsendQuery(handle, sql) == 1 }

    /// Reads and drops the results of what ``send(_:)`` sent.
    package func settle() {
        while let r = PQgetResult(handle) { PQclear(r) }
    }

    /// Where the session stands between statements: outside any transaction, in one, in one
    /// that failed (only ROLLBACK ends it), or neither (a statement under way, a connection lost).
    package enum TransactionState { case none, open, failed, unknown }

    package var transactionState: TransactionState {
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: .none
        case PQTRANS_INTRANS: .open
        case PQTRANS_INERROR: .failed
        default: .unknown
        }
    }

    /// Runs `COPY … FROM STDIN` (as ``copyIn(_:bytes:)``) inside a savepoint of the open
    /// transaction: when it fails, the transaction is rolled back to the savepoint and goes on,
    /// and the error is thrown. For rows sent by the thousand, where the three round trips more
    /// than ``query(_:parameters:types:after:inSavepoint:)`` count for little.
    package func copyInSavepoint(_ sql: String, bytes produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void)
        throws -> Int
    {
        try execute("SAVEPOINT statement")
        let copied: Int
        do {
            copied = try copyIn(sql, bytes: produce)
        } catch {
            _ = try? query("ROLLBACK TO SAVEPOINT statement")
            throw error
        }
        try execute("RELEASE SAVEPOINT statement")
        return copied
    }
}
