import Foundation
import Testing

@testable import RealmAdapter

/// The query filter's semantics where SQL and Realm could differ: a missing value under NOT,
/// empty strings, dates from ISO 8601 text, GLOB's own brackets, and errors that say where.
@Suite struct RealmQueryTests {
    func store(_ kind: StoreKind) throws -> TemporaryStore {
        let t = try TemporaryStore(kind)
        try t.store.apply(
            taskSchema.map(Instruction.addType) + [
                .insert(objectType: "Person", identity: "ann", values: ["id": "ann", "name": "Ann"]),
                .insert(objectType: "Person", identity: "bo", values: ["id": "bo", "name": .null]),
                .insert(
                    objectType: "Task", identity: 1,
                    values: [
                        "id": 1, "title": "[draft] plan", "owner": "ann", "watchers": ["ann", "bo"],
                        "due": .date(Timestamp(seconds: 1_800_000_000, nanoseconds: 0)),
                    ]),
                .insert(objectType: "Task", identity: 2, values: ["id": 2, "title": "ship", "owner": "bo"]),
            ], to: "/q", origin: "test")
        return t
    }

    func ids(_ t: TemporaryStore, _ type: String, _ filter: String) throws -> [String] {
        try t.store.objects(of: type, in: "/q", ObjectQuery(filter: filter)).map { "\($0.identity)" }
    }

    @Test(arguments: StoreKind.all) func missingValuesAndNegation(_ kind: StoreKind) throws {
        let t = try store(kind)
        #expect(try ids(t, "Person", "name BEGINSWITH 'A'") == ["ann"])
        // bo has no name: NOT of a comparison on it holds, as in Realm (not SQL's unknown).
        #expect(try ids(t, "Person", "NOT name BEGINSWITH 'A'") == ["bo"])
        #expect(try ids(t, "Person", "name == nil") == ["bo"])
        #expect(try ids(t, "Person", "name != 'Ann'") == ["bo"])
        #expect(try ids(t, "Person", "name ENDSWITH ''") == ["ann"])
        #expect(try ids(t, "Task", "owner.name == nil") == ["2"])
        #expect(try ids(t, "Task", "watchers.name ==[c] 'ANN' AND !(id == 2)") == ["1"])
    }

    /// Sorted by a property some objects lack, those sort first ascending and last descending, as
    /// in Realm (a null is less than any value) and SQLite, whatever the store's engine does.
    @Test(arguments: StoreKind.all) func missingValuesSortFirst(_ kind: StoreKind) throws {
        let t = try store(kind)
        func sorted(_ descending: Bool) throws -> [String] {
            try t.store.objects(of: "Person", in: "/q", ObjectQuery(sortBy: "name", descending: descending))
                .map { "\($0.identity)" }
        }
        #expect(try sorted(false) == ["bo", "ann"])
        #expect(try sorted(true) == ["ann", "bo"])
    }

    /// Text operators on a primary key and through a link (columns of keys, kept as tagged bytes
    /// on Postgres) compare the key's text, as on any text property.
    @Test(arguments: StoreKind.all) func textOperatorsOnKeysCompareTheirText(_ kind: StoreKind) throws {
        let t = try store(kind)
        #expect(try ids(t, "Person", "id BEGINSWITH 'a'") == ["ann"])
        #expect(try ids(t, "Person", "id ENDSWITH 'o'") == ["bo"])
        #expect(try ids(t, "Person", "id CONTAINS 'n'") == ["ann"])
        #expect(try ids(t, "Person", "id LIKE 'b?'") == ["bo"])
        #expect(try ids(t, "Person", "id ==[c] 'ANN'") == ["ann"])
        #expect(try ids(t, "Person", "id BEGINSWITH[c] 'B'") == ["bo"])
        #expect(try ids(t, "Person", "id > 'b'") == ["bo"])
        #expect(try ids(t, "Task", "owner.id BEGINSWITH 'b'") == ["2"])
    }

    /// A query from a client has bounded nesting and size: a probe crashed the server (its stack)
    /// with 20,000 brackets in one 40 KB GraphQL request, and 300,000 `!` did the same.
    @Test(arguments: StoreKind.all) func deepOrLongQueriesAreErrorsNotCrashes(_ kind: StoreKind) throws {
        let t = try store(kind)
        let deep = String(repeating: "!(", count: 16) + "id == 2" + String(repeating: ")", count: 16)
        #expect(try ids(t, "Task", deep) == ["2"])
        for (bad, says) in [
            (String(repeating: "(", count: 20_000) + "TRUEPREDICATE" + String(repeating: ")", count: 20_000), "nest"),
            (String(repeating: "!", count: 300_000) + "TRUEPREDICATE", "nest"),
            (String(repeating: "NOT ", count: 33) + "TRUEPREDICATE", "more than 32 deep"),
            ((0...500).map { "id == \($0)" }.joined(separator: " || "), "at most 500 conditions"),
        ] {
            #expect {
                try ids(t, "Task", bad)
            } throws: { error in
                (error as? RealmAdapterError)?.message.contains(says) == true
            }
        }
        #expect(try ids(t, "Task", (1...500).map { "id == \($0)" }.joined(separator: " || ")) == ["1", "2"])
    }

    @Test(arguments: StoreKind.all) func datesBracketsAndErrors(_ kind: StoreKind) throws {
        let t = try store(kind)
        #expect(try ids(t, "Task", "due > '2026-01-01T00:00:00Z'") == ["1"])
        #expect(try ids(t, "Task", "title LIKE '[draft]*'") == ["1"])
        #expect(try ids(t, "Task", "title LIKE[c] '*PLAN'") == ["1"])
        #expect(try ids(t, "Task", "(id = 1 || id = 2) && title CONTAINS 'i'") == ["2"])
        for (bad, says) in [
            ("title ==", "at character 9: expected a value"),
            ("owner == 'ann'", "Task.owner is a link: name a property of it"),
            ("tags == 'x'", "Task.tags is a list of values"),
            ("id BEGINSWITH 'x'", "BEGINSWITH compares strings"),
            ("id > null", "null compares only with == or !="),
            ("(id == 1", "expected ')'"),
            ("id == 1 extra", "unexpected 'extra'"),
        ] {
            #expect {
                try ids(t, "Task", bad)
            } throws: { error in
                (error as? RealmAdapterError)?.message.contains(says) == true
            }
        }
    }
}
