import Foundation
@testable import PostgresConnector
import RealmAdapter
import Testing

/// `COPY … TO STDOUT` text rows as the loader reads them, without a server.
@Suite struct CopyTextTests {
    func fields(_ line: String) throws -> [String?] {
        var out: [String?] = []
        try Array(line.utf8).withUnsafeBufferPointer { b in
            try PostgresCopyText.fields(b) { _, bytes in out.append(bytes.map { String(decoding: $0, as: UTF8.self) }) }
        }
        return out
    }

    @Test func splitsFieldsAndUnescapes() throws {
        #expect(try fields("1\tabc\t\\N\t") == ["1", "abc", nil, ""])
        #expect(try fields(#"a\tb\nc\\d\\N"#) == ["a\tb\nc\\d\\N"])  // an escaped backslash before N is text, not NULL
        #expect(try fields(#"\101\x42\u"#) == ["ABu"])
        #expect(try fields("") == [""])
    }

    func decode(_ text: String, _ kind: PostgresType.Kind) throws -> Value {
        try Array(text.utf8).withUnsafeBufferPointer { try PostgresType(oid: 0, name: "t", kind: kind).decode(bytes: $0) }
    }

    @Test func fastPathsAgreeWithTheTextDecoder() throws {
        for (text, kind) in [("-42", PostgresType.Kind.scalar(.int)), ("9223372036854775807", .scalar(.int)), ("-9223372036854775808", .scalar(.int)),
                             ("t", .scalar(.bool)), ("1.5", .scalar(.double)), ("-2.5e-300", .scalar(.double)), ("Infinity", .scalar(.double)),
                             ("0b7f1d26-0c2e-4f35-9d2c-8a3c1f0e5b6a", .scalar(.uuid)), ("0B7F1D26-0C2E-4F35-9D2C-8A3C1F0E5B6A", .scalar(.uuid)),
                             ("2026-11-22 03:04:05.123456+00", .scalar(.date)), ("2024-05-06", .scalar(.date)), ("1999-12-31 23:00:00+05:30", .scalar(.date))] {
            #expect(try decode(text, kind) == PostgresType(oid: 0, name: "t", kind: kind).decode(text), "\(text)")
        }
        #expect(try decode("NaN", .scalar(.double)).description == Value.double(.nan).description)
        #expect(throws: RealmAdapterError.self) { try decode("12x", .scalar(.int)) }
        #expect(throws: RealmAdapterError.self) { try decode("0b7f1d26-0c2e-4f35-9d2c-8a3c1f0e5b6", .scalar(.uuid)) }
        #expect(throws: RealmAdapterError.self) { try decode("1.5x", .scalar(.double)) }
    }
}
