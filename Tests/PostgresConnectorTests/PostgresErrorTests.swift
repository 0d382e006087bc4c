import PostgresConnector
import RealmAdapter
import Testing

/// Which server errors are retried on a new connection, by SQLSTATE name (no server needed).
@Suite struct PostgresErrorTests {
    @Test(arguments: [
        (SQLState("08006"), true), (.adminShutdown, true), (.cannotConnectNow, true), (.serializationFailure, true),
        (.deadlockDetected, true), (.uniqueViolation, false), (.undefinedTable, false), (.foreignKeyViolation, false),
    ])
    func transientErrorsAreKnownByTheirSQLState(state: SQLState, transient: Bool) {
        #expect(PostgresError(.queryFailed, "x", sqlState: state).isTransient == transient)
    }

    @Test func connectionErrorsAreTransientWhateverTheirState() {
        #expect(PostgresError(.connectionLost, "gone").isTransient)
        #expect(!PostgresError(.queryFailed, "bad").isTransient)
        #expect(PostgresError(.queryFailed, "x", sqlState: .uniqueViolation).description == "x (SQLSTATE 23505)")
    }
}
