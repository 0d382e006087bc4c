import CLibPQ
import Foundation
import RealmAdapter

/// A statement's result: column names and type OIDs, and rows of text values (`nil` = NULL).
public struct PostgresResult: Sendable {
    public var columns: [String]
    public var types: [UInt32]
    public var rows: [[String?]]
    /// Rows affected, for INSERT/UPDATE/DELETE.
    public var affected: Int

    /// A result with these rows (of text columns).
    package init(columns: [String], rows: [[String?]], affected: Int) {
        (self.columns, self.types, self.rows, self.affected) = (columns, columns.map { _ in 25 }, rows, affected)
    }

    package init(_ result: OpaquePointer?, connection: OpaquePointer, sql: String) throws {
        guard let result else {
            throw PostgresError.statementFailed(
                PostgresError.libpqMessage(connection), lost: PQstatus(connection) != CONNECTION_OK, query: sql)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard
            status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_COPY_BOTH
                || status == PGRES_COPY_OUT || status == PGRES_COPY_IN
        else {
            func field(_ code: Int32) -> String? { PQresultErrorField(result, code).map { String(cString: $0) } }
            let message =
                field(Int32(UInt8(ascii: "M")))
                ?? String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            let lost = PQstatus(connection) != CONNECTION_OK
            throw PostgresError.statementFailed(
                message, lost: lost, sqlState: field(Int32(UInt8(ascii: "C"))).map { SQLState($0) },
                detail: field(Int32(UInt8(ascii: "D"))), hint: field(Int32(UInt8(ascii: "H"))), query: sql)
        }
        let nCols = Int(PQnfields(result))
        let nRows = Int(PQntuples(result))
        // COPY results have columns but no names.
        columns = (0..<nCols).map { PQfname(result, Int32($0)).map { String(cString: $0) } ?? "" }
        types = (0..<nCols).map { UInt32(PQftype(result, Int32($0))) }
        var rows: [[String?]] = []
        rows.reserveCapacity(nRows)
        for r in 0..<Int32(nRows) {
            rows.append(
                (0..<Int32(nCols)).map { c in
                    PQgetisnull(result, r, c) == 1 ? nil : String(cString: PQgetvalue(result, r, c))
                })
        }
        self.rows = rows
        affected = Int(String(cString: PQcmdTuples(result))) ?? 0
    }
}
