import Foundation
import Testing
@testable import RealmAdapter

/// Values a user (or an attacker) can send: each is stored exactly or rejected with an error
/// that names the instruction, never changed silently and never a crash.
@Suite struct HostileValueTests {
    let date = Property(name: "due", type: .scalar(.date))
    let decimal = Property(name: "price", type: .scalar(.decimal))

    @Test(arguments: [
        "2024-05-01T12:00:00.1234567891Z",  // ten fractional digits: was a crash (Range lowerBound > upperBound)
        "2024-05-01T12:00:00.123456789012345678901234567890Z",
        "2024-02-30", "2023-02-29", "2024-04-31", "1900-02-29",
        "2024-05-01T12:00:00+99:99", "2024-05-01T12:00:00+24:00", "2024-05-01T12:00:00+01:60",
    ])
    func datesThatDoNotExistAreRejected(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
        #expect(throws: RealmAdapterError.self) { try Value.string(text).coerced(to: date, in: .empty) }
    }

    @Test func datesAtTheEdgesAreKept() {
        #expect(Timestamp(iso8601: "2024-02-29")?.iso8601 == "2024-02-29T00:00:00.000Z")
        #expect(Timestamp(iso8601: "2000-02-29T23:59:59.999999999Z")?.nanoseconds == 999_999_999)
        #expect(Timestamp(iso8601: "2024-05-01T12:00:00-23:59") == Timestamp(iso8601: "2024-05-02T11:59:00Z"))
    }

    @Test(arguments: ["1.2.3", "12.50.", "1.2e", "--1", "1e5e5", ".", "", "12,50", "0x10",
                      "12345678901234567890123456789012345678901234"])
    func decimalsThatAreNotExactlyNumbersAreRejected(text: String) {
        #expect(throws: RealmAdapterError.self) { try Value.string(text).coerced(to: decimal, in: .empty) }
    }

    @Test func decimalsAreReadInFull() throws {
        for (text, expected) in [("12.50", "12.5"), ("-0.001", "-0.001"), ("1e5", "100000"), (".5", "0.5"),
                                 ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
                                 ("1000000000000000000000000000000000000000000000", "1" + String(repeating: "0", count: 45))] {
            #expect(try Value.string(text).coerced(to: decimal, in: .empty) == .decimal(Decimal(string: expected)!), "\(text)")
        }
    }

    @Test func aNumberBeyondADoubleIsAnErrorNotInfinity() throws {
        #expect(throws: RealmAdapterError.self) { try JSONValue(parsing: #"{"n": 1e400}"#) }
        #expect(throws: RealmAdapterError.self) { try JSONValue(parsing: "-1e400") }
        let float = Property(name: "f", type: .scalar(.float))
        #expect(throws: RealmAdapterError.self) { try Value.double(1e300).coerced(to: float, in: .empty) }
        #expect(try Value.double(1.5).coerced(to: float, in: .empty) == .float(1.5))
    }

    @Test func aStringWithANulIsRejectedNotCut() throws {
        let t = try TemporaryStore()
        try t.store.apply([.addType(ObjectSchema(name: "Note", primaryKey: "id", properties: [
            Property(name: "id", type: .scalar(.int)), Property(name: "text", type: .scalar(.string))]))], to: "/n", origin: "t")
        #expect {
            try t.store.apply([.insert(objectType: "Note", identity: 1, values: ["id": 1, "text": "before\u{0}after"])], to: "/n", origin: "t")
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.code == .invalidValue && e?.message.contains("instruction 0") == true && e?.message.contains("U+0000") == true
        }
        #expect(try t.store.count(of: "Note", in: "/n") == 0)
    }
}
