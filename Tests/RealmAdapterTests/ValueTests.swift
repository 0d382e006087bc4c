import Foundation
import Testing

@testable import RealmAdapter

@Suite struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00.000Z", Int64(0), Int32(0)),
        ("2024-02-29T23:59:59.123456789Z", Int64(1_709_251_199), Int32(123_456_789)),
        ("1969-12-31T23:59:59.500Z", Int64(-1), Int32(500_000_000)),
        ("1600-03-01T12:00:00.000001Z", Int64(-11_670_868_800), Int32(1_000)),
    ])
    func formatsAndParses(text: String, seconds: Int64, nanos: Int32) throws {
        let t = Timestamp(seconds: seconds, nanoseconds: nanos)
        #expect(t.iso8601 == text)
        #expect(Timestamp(iso8601: text) == t)
    }

    @Test func parsesOffsetsAndDateOnly() {
        #expect(Timestamp(iso8601: "2024-05-01T14:00:00+02:00") == Timestamp(iso8601: "2024-05-01T12:00:00Z"))
        #expect(Timestamp(iso8601: "2024-05-01") == Timestamp(iso8601: "2024-05-01T00:00:00.000Z"))
        #expect(Timestamp(iso8601: "2024-05-01 12:00:00") == Timestamp(iso8601: "2024-05-01T12:00:00Z"))
        #expect(Timestamp(iso8601: "2024-13-01") == nil)
        #expect(Timestamp(iso8601: "yesterday") == nil)
        #expect(Timestamp(iso8601: "2024-05-01T12:00:00Zjunk") == nil)
    }

    @Test func negativeNanosecondsNormalize() {
        let t = Timestamp(seconds: 10, nanoseconds: -1)
        #expect(t.seconds == 9 && t.nanoseconds == 999_999_999)
    }
}

@Suite struct CoercionTests {
    let p = { (t: ScalarType, opt: Bool) in Property(name: "x", type: .scalar(t), isOptional: opt) }

    @Test func stringsBecomeTypedValues() throws {
        let s = Schema.empty
        #expect(
            try Value.string("2024-05-01T12:00:00.250Z").coerced(to: p(.date, false), in: s)
                == .date(Timestamp(seconds: 1_714_564_800, nanoseconds: 250_000_000)))
        #expect(try Value.string("AAEC").coerced(to: p(.data, false), in: s) == .data(Data([0, 1, 2])))
        #expect(try Value.string("12.50").coerced(to: p(.decimal, false), in: s) == .decimal("12.50"))
        #expect(
            try Value.string("507f1f77bcf86cd799439011").coerced(to: p(.objectId, false), in: s)
                == .objectId(ObjectId("507f1f77bcf86cd799439011")!))
        #expect(try Value.int(3).coerced(to: p(.double, false), in: s) == .double(3))
        #expect(try Value.double(2.0).coerced(to: p(.int, false), in: s) == .int(2))
    }

    @Test func mismatchesAreErrors() throws {
        let s = Schema.empty
        #expect(throws: RealmAdapterError.self) { try Value.string("x").coerced(to: p(.int, false), in: s) }
        #expect(throws: RealmAdapterError.self) { try Value.double(1.5).coerced(to: p(.int, false), in: s) }
        #expect(throws: RealmAdapterError.self) { try Value.null.coerced(to: p(.string, false), in: s) }
        #expect(throws: RealmAdapterError.self) { try Value.string("12abc").coerced(to: p(.decimal, false), in: s) }
        #expect(throws: RealmAdapterError.self) { try Value.string("not a date").coerced(to: p(.date, false), in: s) }
        #expect(try Value.null.coerced(to: p(.string, true), in: s) == .null)
    }

    @Test func errorsNeverContainTheValue() {
        do {
            _ = try Value.string("s3cr3t-value").coerced(to: p(.int, false), in: .empty)
            Issue.record("expected an error")
        } catch {
            #expect(!"\(error)".contains("s3cr3t"))
        }
    }
}

@Suite struct JSONValueTests {
    @Test func keepsMemberOrderAndNumberKinds() throws {
        let v = try JSONValue(parsing: #"{"z": 1, "a": 2.5, "m": [true, null, "x\n\u00e9\ud83d\ude00"]}"#)
        guard case .object(let members) = v else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "m"])
        #expect(v["z"] == .int(1))
        #expect(v["a"] == .double(2.5))
        #expect(v["m"] == .array([.bool(true), .null, .string("x\né😀")]))
        #expect(try JSONValue(parsing: v.serialized()) == v)
        #expect(try JSONValue(parsing: v.serialized(pretty: true)) == v)
    }

    @Test func errorsGiveLineAndColumn() {
        #expect {
            try JSONValue(parsing: "{\n  \"a\": 1,\n  \"b\": ]\n}")
        } throws: { e in
            "\(e)".contains("line 3, column 8")
        }
        #expect(throws: RealmAdapterError.self) { try JSONValue(parsing: #"{"a": 1, "a": 2}"#) }
    }
}

extension CoercionTests {
    /// The database's types the mapping documents for other properties: a `numeric` for a double
    /// or float property, a `uuid` for a string property (as Postgres writes it, lower case). A
    /// probe found both refused ("expected double?, found decimal"), and uuids upper case in
    /// strings and JSON, where Postgres and apps compare them as they print them.
    @Test func decimalsBecomeDoublesAndUUIDsLowerCaseText() throws {
        let u = try #require(UUID(uuidString: "AAAAAAAA-2222-4333-8444-0000000000FF"))
        #expect(
            try Value.uuid(u).coerced(to: .string, optional: false) == .string("aaaaaaaa-2222-4333-8444-0000000000ff"))
        #expect(Value.uuid(u).json == .string("aaaaaaaa-2222-4333-8444-0000000000ff"))
        #expect(try Value.decimal("12.50").coerced(to: .double, optional: true) == .double(12.5))
        #expect(try Value.decimal("-0.25").coerced(to: .float, optional: false) == .float(-0.25))
        let huge = try #require(DecimalNumber(exactly: "1" + String(repeating: "0", count: 60)))
        #expect(throws: RealmAdapterError.self) { try Value.decimal(huge).coerced(to: .float, optional: false) }
        #expect(throws: RealmAdapterError.self) { try Value.double(.nan).coerced(to: .decimal, optional: false) }
    }
}
