import Foundation
import Testing

@testable import RealmAdapter

/// Every instruction type, with every value kind, including lists of primitives.
let everyInstruction: [Instruction] = {
    let date = Timestamp(seconds: 1_714_564_800, nanoseconds: 123_456_789)
    return taskSchema.map(Instruction.addType) + [
        .insert(objectType: "Person", identity: "p1", values: ["id": "p1", "name": "Ann"]),
        .insert(objectType: "Person", identity: "p2", values: ["id": "p2", "name": nil]),
        .insert(
            objectType: "Task", identity: 1,
            values: [
                "id": 1, "title": "Ünïcødé \"quoted\"\n", "done": true, "owner": "p1", "due": .date(date),
                "cost": .decimal("12345.6789"), "blob": .data(Data([0, 255, 7])),
                "ratio": .float(0.1), "score": .double(-2.5e-10),
                "ref": .uuid(UUID(uuidString: "123E4567-E89B-12D3-A456-426614174000")!),
                "oid": .objectId(ObjectId("507f1f77bcf86cd799439011")!), "tags": ["a", "b"], "watchers": ["p2"],
            ]),
        .set(objectType: "Task", identity: 1, values: ["title": "new", "due": nil, "ratio": .float(3.25)]),
        .listInsert(objectType: "Task", identity: 1, property: "watchers", index: 0, value: "p1"),
        .listSet(objectType: "Task", identity: 1, property: "watchers", index: 1, value: "p1"),
        .listErase(objectType: "Task", identity: 1, property: "watchers", index: 0),
        .listInsert(objectType: "Task", identity: 1, property: "tags", index: 2, value: "c"),
        .listSet(objectType: "Task", identity: 1, property: "tags", index: 0, value: "z"),
        .listClear(objectType: "Task", identity: 1, property: "tags"),
        .addProperties(
            objectType: "Person",
            properties: [
                Property(name: "age", type: .scalar(.int), isOptional: true),
                Property(name: "nicknames", type: .list(.scalar(.string)), isOptional: true),
            ]),
        .set(objectType: "Person", identity: "p1", values: ["age": 41, "nicknames": ["A", nil]]),
        .insert(objectType: "Note", identity: 0, values: ["text": "first"]),
        .changeIdentity(objectType: "Note", identity: 0, newIdentity: 5),
        .delete(objectType: "Task", identity: 1),
        .clear(objectType: "Note"),
    ]
}()

@Suite struct InstructionTests {
    @Test func coversEveryInstructionType() {
        #expect(
            Set(everyInstruction.map(\.typeName)) == [
                "INSERT", "SET", "DELETE", "CLEAR", "LIST_SET", "LIST_INSERT", "LIST_ERASE",
                "LIST_CLEAR", "ADD_TYPE", "ADD_PROPERTIES", "CHANGE_IDENTITY",
            ])
    }

    @Test func jsonRoundTripIsLossless() throws {
        let json = JSONValue.array(everyInstruction.map { $0.json() })
        let text = json.serialized(pretty: true)
        let decoded = try Instruction.decodeTransaction(try JSONValue(parsing: text), schema: .empty)
        #expect(decoded.count == everyInstruction.count)
        for (a, b) in zip(decoded, everyInstruction) { #expect(a == b) }
    }

    @Test func jsonUsesTheLegacyFieldNames() throws {
        let schema = try Schema(taskSchema)
        let link = Instruction.listInsert(objectType: "Task", identity: 1, property: "watchers", index: 0, value: "p1")
        #expect(link.json(schema: schema)["object_identity"] == .string("p1"))
        #expect(link.json(schema: schema)["list_index"] == .int(0))
        let primitive = Instruction.listInsert(objectType: "Task", identity: 1, property: "tags", index: 0, value: "x")
        #expect(primitive.json(schema: schema)["value"] == .string("x"))
        let insert = everyInstruction.first { $0.typeName == "INSERT" }!.json()
        #expect(insert["object_type"] != nil && insert["identity"] != nil && insert["values"] != nil)
        let date = everyInstruction.compactMap { i -> JSONValue? in
            if case .insert("Task", _, _) = i { i.json()["values"]?["due"] } else { nil }
        }.first
        #expect(date == .string("2024-05-01T12:00:00.123456789Z"))
    }

    @Test func binaryRoundTripIsLossless() throws {
        let bytes = InstructionCodec.encode(everyInstruction)
        #expect(try InstructionCodec.decode(bytes) == everyInstruction)
        #expect(throws: RealmAdapterError.self) { try InstructionCodec.decode(Array(bytes.dropLast(3))) }
    }

    /// Schema instructions are written field by field (each per-user Realm records its types
    /// once); those an earlier release wrote as JSON are still read.
    @Test func schemaInstructionsAreCompactAndTheirEarlierFormStillReads() throws {
        let changes =
            everyInstruction.filter(\.isSchemaChange) + [
                .addProperties(
                    objectType: "Task",
                    properties: [
                        Property(name: "rank", type: .scalar(.int), defaultValue: .int(3)),
                        Property(name: "when", type: .scalar(.date), isOptional: true, isIndexed: true),
                    ])
            ]
        #expect(changes.count > 2)
        #expect(try InstructionCodec.decode(InstructionCodec.encode(changes)) == changes)
        var earlier = BinaryWriter()
        earlier.byte(InstructionCodec.formatVersion)
        earlier.varint(UInt64(changes.count))
        for change in changes {
            switch change {
            case .addType(let t):
                earlier.byte(9)
                earlier.string(t.serializedJSON)
            case .addProperties(let t, let properties):
                earlier.byte(10)
                earlier.string(t)
                earlier.string(JSONValue.object(properties.map { .init($0.name, $0.json) }).serialized())
            default: Issue.record("not a schema change: \(change)")
            }
        }
        #expect(try InstructionCodec.decode(earlier.bytes) == changes)
        let todo = ObjectSchema(
            name: "Todo", primaryKey: "id",
            properties: [
                Property(name: "id", type: .scalar(.int)), Property(name: "owner", type: .scalar(.string)),
                Property(name: "title", type: .scalar(.string)), Property(name: "done", type: .scalar(.bool)),
            ])
        #expect(InstructionCodec.encode([.addType(todo)]).count < 50)  // its JSON alone took 107 bytes
    }

    /// Records are written into room sized from their values first: values at the edges of
    /// every size (longest varints, large and empty payloads, long lists) must fit it exactly.
    @Test func binaryRoundTripKeepsExtremeValues() throws {
        let big = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        let long = String(repeating: "ü€𝄞x", count: 5_000)
        let values: PropertyValues = [
            "min": .int(.min), "max": .int(.max), "zero": 0, "empty": "", "long": .string(long), "big": .data(big),
            "none": .data(Data()),
            "early": .date(Timestamp(seconds: .min / 4, nanoseconds: 999_999_999)),
            "late": .date(Timestamp(seconds: .max / 4)),
            "nan": .double(.nan), "inf": .float(-.infinity), "list": .list((0..<3_000).map { .int(Int64($0) << 40) }),
            "big decimal": .decimal("-12345678901234567890123456789012345678e90"),  // 128 digits before the point
            "small decimal": .decimal(
                DecimalNumber(
                    exactly: "0." + String(repeating: "0", count: 90) + "12345678901234567890123456789012345678")!),
        ]
        let instructions: [Instruction] =
            [
                .insert(objectType: long, identity: .int(.min), values: values),
                // the same names: written as one byte
                .insert(objectType: "T", identity: .string(long), values: values),
                .set(objectType: "T", identity: .data(big), values: values),
            ]
            + values.map {
                .listSet(objectType: "T", identity: $0.value, property: $0.name, index: .max, value: $0.value)
            }
        let decoded = try InstructionCodec.decode(InstructionCodec.encode(instructions))
        // NaN is not equal to itself: compare the encodings of what came back.
        #expect(InstructionCodec.encode(decoded) == InstructionCodec.encode(instructions))
        #expect(decoded.count == instructions.count)
        if case .insert(let t, let id, let v) = decoded[0] {
            #expect(
                t == long && id == .int(.min) && v["big"] == .data(big) && v["long"] == .string(long)
                    && v["min"] == .int(.min))
        } else {
            Issue.record("not an INSERT: \(decoded[0])")
        }
    }

    @Test func malformedInstructionsNameThePath() {
        #expect {
            try Instruction.decodeTransaction(
                try JSONValue(parsing: #"[{"type": "INSERT", "object_type": "A", "identity": 1}]"#), schema: .empty)
        } throws: { "\($0)".contains("[0].values") }
        #expect {
            try Instruction.decodeTransaction(
                try JSONValue(parsing: #"[{"type": "UPSERT", "object_type": "A"}]"#), schema: .empty)
        } throws: { "\($0)".contains("unknown instruction type 'UPSERT'") }
        #expect {
            try Instruction.decodeTransaction(
                try JSONValue(parsing: #"[{"type": "CLEAR", "object_type": "A", "extra": 1}]"#), schema: .empty)
        } throws: { "\($0)".contains("[0].extra: unknown key") }
    }
}
