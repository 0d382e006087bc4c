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

    /// A date that exists but that a Realm cannot hold is rejected where it comes in (a connector's
    /// text, JSON), naming the range, not when the store writes it (a probe found a Postgres
    /// `0001-01-01` rejecting its whole database transaction, unnamed).
    @Test(arguments: ["0001-01-01T00:00:00Z", "1677-09-21T00:00:00Z", "2262-04-12T00:00:00Z", "9999-12-31"])
    func datesARealmCannotHoldAreRejected(text: String) throws {
        #expect(Timestamp(iso8601: text)?.isStorable == false)
        let error = #expect(throws: RealmAdapterError.self) { try Value.string(text).coerced(to: date, in: .empty) }
        #expect(error?.message.contains("years 1678 to 2261") == true)
    }

    @Test func datesAtTheEdgesAreKept() {
        #expect(Timestamp(iso8601: "2024-02-29")?.iso8601 == "2024-02-29T00:00:00.000Z")
        #expect(Timestamp(iso8601: "2000-02-29T23:59:59.999999999Z")?.nanoseconds == 999_999_999)
        #expect(Timestamp(iso8601: "2024-05-01T12:00:00-23:59") == Timestamp(iso8601: "2024-05-02T11:59:00Z"))
    }

    @Test(arguments: [
        "1.2.3", "12.50.", "1.2e", "--1", "1e5e5", ".", "", "12,50", "0x10",
        "12345678901234567890123456789012345678901234",
    ])
    func decimalsThatAreNotExactlyNumbersAreRejected(text: String) {
        #expect(throws: RealmAdapterError.self) { try Value.string(text).coerced(to: decimal, in: .empty) }
    }

    @Test func decimalsAreReadInFull() throws {
        for (text, expected) in [
            ("12.50", "12.50"), ("-0.001", "-0.001"), ("1e5", "100000"), (".5", "0.5"),
            ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
            ("1000000000000000000000000000000000000000000000", "1" + String(repeating: "0", count: 45)),
        ] {
            #expect(
                try Value.string(text).coerced(to: decimal, in: .empty) == .decimal(DecimalNumber(exactly: expected)!),
                "\(text)")
        }
    }

    /// A decimal keeps its scale (apps show money): `1.00` is not `1`, through coercion, the
    /// store, history, the instruction codec and JSON.
    @Test(arguments: StoreKind.all) func decimalsKeepTheirScale(_ kind: StoreKind) throws {
        for (text, expected) in [
            ("1.00", "1.00"), ("12.50", "12.50"), ("-0.00", "0.00"), ("1.50e1", "15.0"),
            ("0.000", "0.000"), ("+007.10", "7.10"), ("1.5E+3", "1500"), ("25e-3", "0.025"),
        ] {
            let v = try Value.string(text).coerced(to: decimal, in: .empty)
            #expect(v.description == expected, "\(text)")
            #expect(v.json == .string(expected), "\(text)")
        }
        #expect(
            try Value.string("1.00").coerced(to: decimal, in: .empty)
                != Value.string("1").coerced(to: decimal, in: .empty))
        let t = try TemporaryStore(kind)
        try t.store.apply(
            [
                .addType(
                    ObjectSchema(
                        name: "Price", primaryKey: "id",
                        properties: [
                            Property(name: "id", type: .scalar(.int)), decimal,
                        ]))
            ], to: "/p", origin: "t")
        let price = try Value.string("1.00").coerced(to: decimal, in: .empty)
        try t.store.apply(
            [.insert(objectType: "Price", identity: 1, values: ["id": 1, "price": price])], to: "/p", origin: "t")
        #expect(try t.store.object(of: "Price", identity: 1, in: "/p")?.values["price"]?.description == "1.00")
        let recorded = try t.store.history(of: "/p").last?.instructions.first
        guard case .insert(_, _, let values)? = recorded else {
            Issue.record("no insert in history")
            return
        }
        #expect(values["price"]?.description == "1.00")
        let decoded = try InstructionCodec.decode(
            InstructionCodec.encode([
                .set(
                    objectType: "Price", identity: 1,
                    values: ["price": price])
            ]))
        guard case .set(_, _, let back)? = decoded.first else {
            Issue.record("no set decoded")
            return
        }
        #expect(back["price"]?.description == "1.00")
    }

    @Test func aNumberBeyondADoubleIsAnErrorNotInfinity() throws {
        #expect(throws: RealmAdapterError.self) { try JSONValue(parsing: #"{"n": 1e400}"#) }
        #expect(throws: RealmAdapterError.self) { try JSONValue(parsing: "-1e400") }
        let float = Property(name: "f", type: .scalar(.float))
        #expect(throws: RealmAdapterError.self) { try Value.double(1e300).coerced(to: float, in: .empty) }
        #expect(try Value.double(1.5).coerced(to: float, in: .empty) == .float(1.5))
    }

    @Test(arguments: StoreKind.all) func aStringWithANulIsRejectedNotCut(_ kind: StoreKind) throws {
        let t = try TemporaryStore(kind)
        try t.store.apply(
            [
                .addType(
                    ObjectSchema(
                        name: "Note", primaryKey: "id",
                        properties: [
                            Property(name: "id", type: .scalar(.int)), Property(name: "text", type: .scalar(.string)),
                        ]))
            ], to: "/n", origin: "t")
        #expect {
            try t.store.apply(
                [.insert(objectType: "Note", identity: 1, values: ["id": 1, "text": "before\u{0}after"])], to: "/n",
                origin: "t")
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.code == .invalidValue && e?.context["instruction"] == "0" && e?.context["realm.path"] == "/n"
        }
        #expect(try t.store.count(of: "Note", in: "/n") == 0)
    }
}

extension HostileValueTests {
    /// NaN and the infinities are values of `float` and `double` properties (Realm keeps them): the
    /// store gives back what was written (SQLite stores a NaN as NULL when it is bound as a REAL).
    /// JSON has no NaN or infinity: they travel as text and come back as numbers (a probe found
    /// them written as `null` in webhook payloads, `realm dump` and `realm history`).
    @Test func notANumberAndTheInfinitiesTravelInJSONAsText() throws {
        let double = Property(name: "d", type: .scalar(.double))
        let float = Property(name: "f", type: .scalar(.float))
        for (value, text) in [(Double.nan, "NaN"), (.infinity, "Infinity"), (-.infinity, "-Infinity")] {
            #expect(Value.double(value).json == .string(text))
            #expect(Value.float(Float(value)).json == .string(text))
            let back = try Value(json: .string(text)).coerced(to: double, in: .empty)
            guard case .double(let d) = back else {
                Issue.record("\(text) came back as \(back)")
                continue
            }
            #expect(d.isNaN ? value.isNaN : d == value)
            guard case .float(let f) = try Value(json: .string(text)).coerced(to: float, in: .empty) else {
                Issue.record("\(text) is not a float")
                continue
            }
            #expect(f.isNaN ? value.isNaN : Double(f) == value)
        }
        #expect(throws: RealmAdapterError.self) { try Value.string("nan").coerced(to: double, in: .empty) }
    }

    @Test(arguments: StoreKind.all) func notANumberAndTheInfinitiesAreKept(_ kind: StoreKind) async throws {
        let t = try TemporaryStore(kind)
        let type = ObjectSchema(
            name: "M", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.int)), Property(name: "f", type: .scalar(.float)),
                Property(name: "d", type: .scalar(.double)),
                Property(name: "o", type: .scalar(.double), isOptional: true),
            ])
        let values: [(Float, Double)] = [(.nan, .nan), (.infinity, -.infinity), (-.infinity, .infinity)]
        try await t.store.apply(
            [.addType(type)]
                + values.enumerated().map { i, v in
                    .insert(
                        objectType: "M", identity: .int(Int64(i)),
                        values: ["id": .int(Int64(i)), "f": .float(v.0), "d": .double(v.1), "o": .double(v.1)])
                }, to: "/m", origin: "test")
        for (i, v) in values.enumerated() {
            let o = try #require(try t.store.object(of: "M", identity: .int(Int64(i)), in: "/m"))
            guard case .float(let f)? = o.values["f"], case .double(let d)? = o.values["d"],
                case .double(let opt)? = o.values["o"]
            else {
                Issue.record("object \(i) came back as \(o.values)")
                continue
            }
            #expect(f.isNaN == v.0.isNaN && (f.isNaN || f == v.0), "object \(i)")
            #expect(d.isNaN == v.1.isNaN && (d.isNaN || d == v.1), "object \(i)")
            #expect(opt.isNaN == v.1.isNaN && (opt.isNaN || opt == v.1), "object \(i)")
        }
    }
}
