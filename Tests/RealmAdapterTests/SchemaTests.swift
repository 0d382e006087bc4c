import Testing

@testable import RealmAdapter

@Suite struct SchemaTests {
    @Test func parsesRealmJSModelSyntax() throws {
        let json = try JSONValue(
            parsing: """
                [{"name": "Bus", "primaryKey": "id", "properties": {
                    "id": "int", "plate": "string?", "driver": "Driver", "stops": "Stop[]", "speeds": "double?[]",
                    "route": {"type": "object", "objectType": "Route"},
                    "legacy": {"type": "list", "objectType": "Stop", "watch_table": true},
                    "codes": {"type": "list", "objectType": "int"},
                    "seen": {"type": "date", "optional": true, "indexed": true},
                    "seats": {"type": "int", "default": 40}}},
                 {"name": "Driver", "primaryKey": "name", "properties": {"name": "string",
                    "buses": {"type": "linkingObjects", "objectType": "Bus", "property": "driver"}}},
                 {"name": "Stop", "properties": {"label": "string", "price": "decimal128", "oid": "objectId?"}},
                 {"name": "Route", "primaryKey": "code", "properties": {"code": "uuid"}}]
                """)
        let s = try Schema(json: json)
        let bus = try #require(s[type: "Bus"])
        #expect(
            bus.properties.map(\.name) == [
                "id", "plate", "driver", "stops", "speeds", "route", "legacy", "codes", "seen", "seats",
            ])
        #expect(bus[property: "plate"]?.type == .scalar(.string) && bus[property: "plate"]?.isOptional == true)
        #expect(bus[property: "driver"]?.type == .link("Driver"))
        #expect(bus[property: "stops"]?.type == .list(.link("Stop")))
        #expect(bus[property: "speeds"]?.type == .list(.scalar(.double)) && bus[property: "speeds"]?.isOptional == true)
        #expect(bus[property: "route"]?.type == .link("Route"))
        #expect(bus[property: "legacy"]?.watchTable == true)
        #expect(bus[property: "codes"]?.type == .list(.scalar(.int)))
        #expect(bus[property: "seen"]?.isIndexed == true)
        #expect(bus[property: "seats"]?.defaultValue == .int(40))
        #expect(s[type: "Driver"]?[property: "buses"]?.type == .linkingObjects(objectType: "Bus", property: "driver"))
        #expect(s[type: "Stop"]?[property: "price"]?.type == .scalar(.decimal))
        #expect(s[type: "Stop"]?.primaryKey == nil)
        // The JSON form reads back to the same schema.
        #expect(try Schema(json: s.json) == s)
    }

    @Test(arguments: [
        (#"[{"name": "A", "properties": {"b": "B"}}]"#, "A.b", "unknown type 'B'"),
        (#"[{"name": "A", "properties": {"b": "B[]"}}]"#, "A.b", "unknown type 'B'"),
        (#"[{"name": "A", "primaryKey": "id", "properties": {"x": "int"}}]"#, "A.id", "not among the properties"),
        (
            #"[{"name": "A", "primaryKey": "id", "properties": {"id": "double"}}]"#, "A.id",
            "must be int, string, uuid or objectId"
        ),
        (
            #"[{"name": "A", "properties": {"bs": {"type": "linkingObjects", "objectType": "B", "property": "a"}}}, {"name": "B", "properties": {"a": "int"}}]"#,
            "A.bs", "not a link to 'A'"
        ),
        (
            #"[{"name": "A", "properties": {"bs": {"type": "linkingObjects", "objectType": "B", "property": "zz"}}}, {"name": "B", "properties": {"a": "A"}}]"#,
            "A.bs", "does not exist"
        ),
        (
            #"[{"name": "A", "properties": {"x": "int"}}, {"name": "A", "properties": {"y": "int"}}]"#, "A",
            "defined twice"
        ),
        (#"[{"name": "A", "properties": {"x": {"type": "int", "default": "seven"}}}]"#, "A.x", "default value"),
    ])
    func rejectsInvalidSchemas(json: String, place: String, reason: String) throws {
        #expect {
            try Schema(json: try JSONValue(parsing: json))
        } throws: { error in
            let e = error as! RealmAdapterError
            return e.code == .invalidSchema && e.message.contains(place) && e.message.contains(reason)
        }
    }

    @Test func unknownTypeNamesAndKeysNameTheJSONPath() throws {
        #expect {
            try Schema(json: try JSONValue(parsing: #"[{"name": "A", "properties": {"x": "int???"}}]"#))
        } throws: { "\($0)".contains("schema[0].properties.x") }
        #expect {
            try Schema(
                json: try JSONValue(parsing: #"[{"name": "A", "properties": {"x": {"type": "int", "optinal": true}}}]"#)
            )
        } throws: { "\($0)".contains("schema[0].properties.x.optinal: unknown key") }
    }

    @Test func additiveChangesMergeAndDestructiveOnesFail() throws {
        let s = try Schema([
            ObjectSchema(name: "A", primaryKey: "id", properties: [Property(name: "id", type: .scalar(.int))])
        ])
        let grown = try s.adding(
            properties: [Property(name: "note", type: .scalar(.string), isOptional: true)], to: "A")
        #expect(grown[type: "A"]?.properties.map(\.name) == ["id", "note"])
        // Re-adding an identical type is a no-op.
        #expect(try grown.adding(grown[type: "A"]!) == grown)
        #expect(throws: RealmAdapterError.self) {
            try grown.adding(properties: [Property(name: "note", type: .scalar(.int), isOptional: true)], to: "A")
        }
        #expect(throws: RealmAdapterError.self) {
            try grown.adding(ObjectSchema(name: "A", primaryKey: "note", properties: []))
        }
        #expect(throws: RealmAdapterError.self) {
            try grown.adding(properties: [Property(name: "required", type: .scalar(.int))], to: "A")
        }
    }
}
