import Foundation
import PostgresConnector

/// The write limit of a Postgres server for a load: a shape's rows, read beforehand, `COPY`'d in
/// one transaction into plain tables of the same columns and primary keys (no foreign keys, no
/// other index), in a schema of their own beside the source tables, on the same server.
struct PostgresFloor {
    let tables: [(name: String, rows: [UInt8])]

    /// Reads every table of `shape` and makes its plain twin in schema `floor`.
    init(_ shape: LoadShape, from pg: PostgresConnection) throws {
        tables = try pg.sessionSync { s in
            try s.execute("CREATE SCHEMA floor")
            return try shape.tables.map { table in
                var rows: [UInt8] = []
                try s.copyOut("COPY \(table) TO STDOUT") { rows += $0 }
                try s.execute("CREATE TABLE floor.\(table) (LIKE public.\(table) INCLUDING INDEXES)")
                return (table, rows)
            }
        }
    }

    /// One round: empties the plain tables, then times the `COPY` of every table's rows in one
    /// transaction.
    func copy(into pg: PostgresConnection) throws -> Duration {
        try pg.sessionSync { s in
            try s.execute("TRUNCATE " + tables.map { "floor.\($0.name)" }.joined(separator: ", "))
            return try ContinuousClock().measure {
                try s.execute("BEGIN")
                for (table, rows) in tables {
                    _ = try s.copyIn("COPY floor.\(table) FROM STDIN") { send in
                        try rows.withUnsafeBytes { all in
                            for start in stride(from: 0, to: all.count, by: 1 << 16) {
                                try send(UnsafeRawBufferPointer(rebasing: all[start..<min(all.count, start + 1 << 16)]))
                            }
                        }
                    }
                }
                try s.execute("COMMIT")
            }
        }
    }
}
