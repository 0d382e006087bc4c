import CLibPQ

extension PostgresSession {
    /// Runs one statement inside a savepoint of the open transaction, in one round trip: the
    /// savepoint, the statement (prepared the first time its text is seen on this connection,
    /// as ``pipeline(_:endsGroup:)`` does) and the savepoint's release go in libpq's pipeline
    /// mode. When the statement fails, the transaction is rolled back to the savepoint (one more
    /// round trip) and goes on; the statement's error is thrown.
    ///
    /// For a caller that expects some statements to fail (a key already there) without losing
    /// its transaction, as SQLite undoes a failed statement alone.
    package func queryInSavepoint(_ sql: String, parameters: [PostgresParameter?], types: [UInt32]) throws
        -> PostgresResult
    {
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError.statementFailed(PostgresError.libpqMessage(handle), lost: false, query: sql)
        }
        var exited = false
        defer { if !exited { PQexitPipelineMode(handle) } }
        // By text and parameter types: a statement is prepared with the types of its first run.
        let key = sql + "\u{1}" + types.map(String.init).joined(separator: ",")
        var name = connection.prepared[key]
        var new: String?
        if name == nil, connection.prepared.count < Self.maxPrepared {
            new = connection.nextPreparedName()
            name = new
        }
        let sent = try withParameters(parameters) { count, values, lengths, formats in
            guard PQsendQueryParams(handle, "SAVEPOINT statement", 0, nil, nil, nil, nil, 0) == 1 else { return false }
            if let new, PQsendPrepare(handle, new, sql, count, types) != 1 { return false }
            let ok =
                if let name {
                    PQsendQueryPrepared(handle, name, count, values, lengths, formats, 0)
                } else {
                    PQsendQueryParams(handle, sql, count, types, values, lengths, formats, 0)
                }
            return ok == 1 && PQsendQueryParams(handle, "RELEASE SAVEPOINT statement", 0, nil, nil, nil, nil, 0) == 1
                && PQpipelineSync(handle) == 1
        }
        guard sent else {
            throw PostgresError.statementFailed(
                PostgresError.libpqMessage(handle), lost: PQstatus(handle) != CONNECTION_OK, query: sql)
        }
        // The results in order: the savepoint, the preparation (if any), the statement, the
        // release; after a failure, the rest are PGRES_PIPELINE_ABORTED. Then the sync.
        var failure: Error?
        var result: PostgresResult?
        for step in 0..<(new == nil ? 3 : 4) {
            let isStatement = step == (new == nil ? 1 : 2)
            while let r = PQgetResult(handle) {
                do {
                    let read = try PostgresResult(r, connection: handle, sql: isStatement ? sql : "SAVEPOINT")
                    if isStatement { result = read }
                    if let new, step == 1 { connection.prepared[key] = new }
                } catch  where failure == nil {
                    failure = error
                } catch {}
            }
        }
        if let sync = PQgetResult(handle) { PQclear(sync) }  // PGRES_PIPELINE_SYNC
        PQexitPipelineMode(handle)
        exited = true
        if let failure {
            _ = try? query("ROLLBACK TO SAVEPOINT statement")
            throw failure
        }
        guard let result else {
            throw PostgresError.statementFailed(PostgresError.libpqMessage(handle), lost: false, query: sql)
        }
        return result
    }

    /// Runs `COPY … FROM STDIN` (as ``copyIn(_:bytes:)``) inside a savepoint of the open
    /// transaction: when it fails, the transaction is rolled back to the savepoint and goes on,
    /// and the error is thrown. For rows sent by the thousand, where the three round trips more
    /// than ``queryInSavepoint(_:parameters:types:)`` count for little.
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
