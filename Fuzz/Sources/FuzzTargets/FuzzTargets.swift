import Foundation
import RealmAdapter

@testable import PostgresConnector

/// The inputs an attacker or a broken peer controls, each as a function of bytes: any input must
/// end in a value or a thrown error, never a crash. libFuzzer drives them (`scripts/fuzz.sh`),
/// and the test suite replays every kept input (`Fuzz/corpus/<target>/`).
public enum FuzzTargets {
    /// The targets by name.
    public static let all: [String: @Sendable (UnsafeRawBufferPointer) -> Void] = [
        "instructions": instructions, "configuration": configuration, "pgoutput": pgoutput, "copy-binary": copyBinary,
    ]

    static let schema = try! Schema(
        json: JSONValue(
            parsing: """
                [{"name": "Task", "primaryKey": "id", "properties": {"id": "int", "title": "string", "due": "date?", "price": "decimal?",
                  "tags": "string[]", "owner": "Person", "data": "data?", "key": "uuid?", "score": "double?", "f": "float?"}},
                 {"name": "Person", "primaryKey": "name", "properties": {"name": "string"}}]
                """))

    /// A JSON array of instructions (`realm apply`), typed against a schema.
    static func instructions(_ bytes: UnsafeRawBufferPointer) {
        guard let json = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)) else { return }
        _ = try? Instruction.decodeTransaction(json, schema: schema)
        if case .array(let items) = json { for item in items { _ = try? Instruction(json: item) } }
    }

    /// A configuration file, and the mapping built from it.
    static func configuration(_ bytes: UnsafeRawBufferPointer) {
        guard let json = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)),
            let c = try? Configuration(json: json, environment: ["PGPASSWORD": "x"], connectors: .postgres)
        else { return }
        _ = try? Mapping(c)
    }

    /// A pgoutput message, and text values of every type the stream decodes.
    static func pgoutput(_ bytes: UnsafeRawBufferPointer) {
        _ = try? PgOutputMessage(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        for (oid, entry) in PostgresType.builtins {
            _ = try? PostgresType(oid: oid, name: entry.0, kind: entry.1).decode(text)
        }
    }

    /// A binary COPY message (first and later), and each field read as every binary type.
    static func copyBinary(_ bytes: UnsafeRawBufferPointer) {
        let message = bytes.bindMemory(to: UInt8.self)
        for first in [true, false] {
            _ = try? PostgresCopyBinary.fields(message, first: first) { _, field in
                guard let field else { return }
                for oid: UInt32 in [16, 21, 23, 20, 26, 700, 701, 25, 1043, 1042, 19, 17, 2950, 1082, 1114, 1184] {
                    _ = try? BinaryField(oid: oid).value(field)
                }
            }
        }
    }
}
