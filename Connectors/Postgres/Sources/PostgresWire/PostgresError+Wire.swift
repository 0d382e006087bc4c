import CLibPQ
import Foundation
import RealmAdapter

/// The errors of connections and statements, for the connector and the store alike.
extension PostgresError {
    /// libpq's last message on a connection, trimmed.
    package static func libpqMessage(_ conn: OpaquePointer?) -> String {
        String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Connections

    package static func cannotAllocate(_ target: String) -> PostgresError {
        PostgresError(.connectionFailed, "Could not allocate a connection to \(target).")
    }

    package static func cannotConnect(_ target: String, server: String) -> PostgresError {
        var e = PostgresError(
            .connectionFailed,
            "Cannot connect to Postgres at \(target): \(server). "
                + "Check database.host/port/user and that the server is running.")
        e.detail = server
        return e
    }

    /// A statement that got no result or an error result; `lost`: the connection broke.
    package static func statementFailed(
        _ message: String, lost: Bool, sqlState: SQLState? = nil, detail: String? = nil, hint: String? = nil,
        query: String
    ) -> PostgresError {
        PostgresError(
            lost ? .connectionLost : .queryFailed, message.isEmpty ? "The statement failed." : message,
            sqlState: sqlState, detail: detail, hint: hint, query: query)
    }
}
