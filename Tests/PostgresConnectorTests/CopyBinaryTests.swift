import Foundation
import RealmAdapter
import Testing

@testable import PostgresConnector

extension PostgresIntegration {
    /// The loader reads `COPY … (FORMAT binary)`; the daemon reads text (pgoutput). Both must give
    /// the same values, so every type read in binary is checked against its text form, on the server.
    @Suite struct CopyBinaryTests {
        /// The value of `literal::type` in binary (through the loader's row parser) and in text.
        func both(_ literal: String, _ typeName: String, oid: UInt32) async throws -> (
            binary: Result<Value, Error>, text: Result<Value, Error>
        ) {
            let pg = try await PostgresConnection.connect(TestServer.settings)
            defer { pg.close() }
            let type = try #require(PostgresType.resolve(oid: oid, name: typeName, customTypes: [:]))
            #expect(type.hasBinaryForm, "\(typeName)")
            let expression = "\(PostgresSQL.literal(literal))::\(typeName)"
            return try await pg.session { s in
                // the output function, as pgoutput sends it
                let text = try #require(try s.query("SELECT \(expression)").rows[0][0])
                var binary: Result<Value, Error>?
                var first = true
                var rows = 0
                try s.copyOut("COPY (SELECT \(expression), NULL::\(typeName)) TO STDOUT (FORMAT binary)") { message in
                    var fields: [UnsafeBufferPointer<UInt8>?] = []
                    let isRow = try PostgresCopyBinary.fields(message, first: first) { i, bytes in
                        #expect(i == fields.count)
                        fields.append(bytes)
                        if i == 0, let bytes { binary = Result { try type.decode(binary: bytes) } }
                    }
                    first = false
                    if isRow {
                        rows += 1
                        #expect(fields.count == 2 && fields[1] == nil, "the second column is NULL")
                    }
                }
                #expect(rows == 1)
                return (try #require(binary), Result { try type.decode(text) })
            }
        }

        @Test func binaryValuesAgreeWithText() async throws {
            let cases: [(UInt32, String, [String])] = [
                (16, "boolean", ["t", "f"]),
                (21, "smallint", ["-32768", "32767", "0"]),
                (23, "integer", ["-2147483648", "2147483647"]),
                (20, "bigint", ["-9223372036854775808", "9223372036854775807", "-1"]),
                (26, "oid", ["4294967295"]),
                (700, "real", ["1.5", "-3.4e38", "1e-45", "Infinity", "-0"]),
                (701, "double precision", ["0.1", "-1e-300", "-Infinity", "1.7976931348623157e308"]),
                (25, "text", ["", "héllo\tworld\n", "back\\slash", "日本"]),
                (1043, "varchar", ["abc"]), (1042, "char(5)", ["ab"]), (19, "name", ["pg_class"]),
                (17, "bytea", ["\\x", "\\x00ff0a5c"]),
                (2950, "uuid", ["0b7f1d26-0c2e-4f35-9d2c-8a3c1f0e5b6a"]),
                (1082, "date", ["2000-01-01", "1970-01-01", "1969-12-31", "1677-09-22", "2261-12-31"]),
                (
                    1114, "timestamp",
                    ["1999-12-31 23:59:59.999999", "1900-01-01 00:00:00.000001", "2026-11-22 03:04:05"]
                ),
                (
                    1184, "timestamptz",
                    ["2026-11-22 03:04:05.123456+00", "1969-07-20 20:17:40.5+00", "2000-01-01 05:30:00+05:30"]
                ),
            ]
            for (oid, typeName, literals) in cases {
                for literal in literals {
                    let (binary, text) = try await both(literal, typeName, oid: oid)
                    // NaN-free cases: equal values; descriptions tell -0 from 0.
                    #expect(
                        try binary.get() == text.get() && binary.get().description == text.get().description,
                        "\(typeName) \(literal)")
                }
            }
            let nan = try await both("NaN", "double precision", oid: 701)
            #expect(try nan.binary.get().description == Value.double(.nan).description)
        }

        @Test func infinityIsAnErrorBothWays() async throws {
            for (oid, typeName) in [(UInt32(1082), "date"), (1114, "timestamp"), (1184, "timestamptz")] {
                for literal in ["infinity", "-infinity"] {
                    let (binary, text) = try await both(literal, typeName, oid: oid)
                    #expect(throws: RealmAdapterError.self, "\(typeName) \(literal)") { try binary.get() }
                    #expect(throws: RealmAdapterError.self, "\(typeName) \(literal)") { try text.get() }
                }
            }
        }

        @Test func truncatedRowsAreErrors() throws {
            // A row claiming two fields that carries one (field count 2, a 4-byte int).
            let row: [UInt8] = [0, 2, 0, 0, 0, 4, 0, 0, 0, 42]
            #expect(throws: PostgresError.self) {
                try row.withUnsafeBufferPointer { try PostgresCopyBinary.fields($0, first: false) { _, _ in } }
            }
            #expect(throws: PostgresError.self) {
                try row.withUnsafeBufferPointer { try PostgresCopyBinary.fields($0, first: true) { _, _ in } }
            }
        }
    }
}
