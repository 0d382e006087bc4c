import Foundation
import GraphQL
import RealmAdapter
import Testing

@testable import RealmServer

/// ``DirectQuery`` answers plain queries without GraphQL's executor: its answers must be the
/// executor's, byte for byte, and it must leave everything else (and every error) to it.
@Suite struct DirectQueryTests {
    /// Every scalar type, optional and not, lists of them, links, lists of links, a
    /// `linkingObjects` property; values at the edges (32-bit limits, empty and null lists).
    static let instructions = #"""
        [{"type": "ADD_TYPE", "object_type": "Kind", "primary_key": "code",
          "properties": {"code": "string", "label": "string?"}},
         {"type": "ADD_TYPE", "object_type": "Thing", "primary_key": "id",
          "properties": {"id": "int", "flag": "bool", "ratio": "float", "score": "double?", "name": "string",
                         "born": "date?", "price": "decimal?", "uid": "uuid?", "oid": "objectId?", "blob": "data?",
                         "big": "int?", "tags": "string[]", "marks": "int?[]", "kind": "Kind", "kinds": "Kind[]"}},
         {"type": "ADD_PROPERTIES", "object_type": "Kind",
          "properties": {"things": {"type": "linkingObjects", "objectType": "Thing", "property": "kind"}}},
         {"type": "INSERT", "object_type": "Kind", "identity": "a", "values": {"code": "a", "label": "Alpha"}},
         {"type": "INSERT", "object_type": "Kind", "identity": "b", "values": {"code": "b"}},
         {"type": "INSERT", "object_type": "Thing", "identity": 1,
          "values": {"id": 1, "flag": true, "ratio": 0.5, "score": 2.0, "name": "one \"quoted\" \u00e9\n",
                     "born": "2024-02-29T12:34:56.789Z", "price": "12.50",
                     "uid": "9A5C1D5E-1111-4222-8333-444455556666",
                     "oid": "65f1c0ffee0000000000abcd", "blob": "AAEC/w==", "big": 2147483647,
                     "tags": ["x", "y"], "marks": [1, 2147483647, -2147483648], "kind": "a", "kinds": ["b", "a", "b"]}},
         {"type": "INSERT", "object_type": "Thing", "identity": 2,
          "values": {"id": 2, "flag": false, "ratio": 1e-7, "name": "", "tags": [], "kind": "a"}},
         {"type": "INSERT", "object_type": "Thing", "identity": 3,
          "values": {"id": 3, "flag": false, "ratio": 3, "score": -0.0, "name": "three", "big": 4294967296}}]
        """#

    static let plain = [
        "subscription { __typename things(take: 1) { id } }",  // subscriptions answer as queries do
        // Single values only: read as a projection of their columns.
        "{ things(sortBy: \"name\", descending: true) { __typename id flag ratio score name born price uid oid "
            + "blob } }",
        "{ things(sortBy: \"id\") { id flag ratio score name born price uid oid blob tags marks } }",
        "{ things(take: 2, skip: 1, descending: true) { __typename id kind { code label } kinds { code } } }",
        "{ a: thing(id: 1) { n: name, id } b: thing(id: 99) { id } kind(code: \"a\") { label things { id } } }",
        "query Q($q: String, $n: Int = 2) { things(query: $q, take: $n, sortBy: \"name\") { name } }",
        "{ __typename kinds { __typename code things { name kind { things { id } } } } }",
        "query One { things(query: \"flag == true\") { id } } query Two { kinds { code } }",
        "{ things(take: 1) { ...F kind { ... on Kind { code } } } } fragment F on Thing { id ...G } "
            + "fragment G on Thing { name }",
        "query($yes: Boolean = true) { things { id @include(if: $yes) name @skip(if: $yes) "
            + "... @include(if: false) { flag } } }",
    ]

    static let notPlain = [
        "{ things { id ... { id } } }",  // one answer key twice: GraphQL merges them
        "{ things { id @deprecated } }",  // not a directive of queries: invalid
        "{ __schema { queryType { name } } }",  // introspection
        "{ kind(code: \"a\") { _linkingObjects(objectType: \"Thing\", property: \"kind\") { __typename } } }",
        "{ things { id big } }",  // 4294967296 is past GraphQL's Int: an error
        "{ things(query: \"nope == 1\") { id } }",  // a bad filter: an error
        "{ things(take: -1) { id } }",  // an error
        "{ things { nope } }",  // invalid
        "{ things { id id: name } }",  // invalid (fields in conflict)
    ]

    func answers(
        _ query: String, variables: [String: JSONValue] = [:], operation: String? = nil, floats: Bool = false,
        extra: String? = nil, then: [Instruction] = [], restricted: Bool = false
    ) async throws -> (direct: String?, executor: String) {
        let dir = NSTemporaryDirectory() + "direct-query-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try RealmStore(directory: dir)
        let json = try JSONValue(parsing: Data(Self.instructions.utf8))
        try await store.apply(try Instruction.decodeTransaction(json, schema: .empty), to: "/t", origin: "test")
        if let extra {
            let more = try Instruction.decodeTransaction(
                try JSONValue(parsing: Data(extra.utf8)), schema: try store.schema(of: "/t"))
            try await store.apply(more, to: "/t", origin: "test")
        }
        if !then.isEmpty { try await store.apply(then, to: "/t", origin: "test") }
        if restricted { try Self.restrict(store) }
        let entry = try GraphQLSchemaCache(intsAsFloats: floats).schema(of: "/t", in: store)
        func context() throws -> GraphQLContext {
            try GraphQLContext(
                store: store, path: "/t", schema: entry.schema,
                viewer: restricted ? Viewer(id: "u1", isAdmin: false) : Viewer(nil), level: .manage,
                budget: ObjectBudget())
        }
        let direct = DirectQuery.answer(
            try parse(source: Source(body: query)), text: query, entry, variables: variables, operation: operation,
            context: try context())
        let result = try await graphql(
            schema: entry.graphQL, request: query, context: try context(),
            variableValues: variables.mapValues(GraphQLValues.map), operationName: operation)
        return (
            direct.map { String(decoding: $0, as: UTF8.self) },
            String(decoding: try GraphQLResponse.json(result), as: UTF8.self)
        )
    }

    @Test(arguments: plain) func plainQueriesAreAnsweredAsTheExecutorWould(_ query: String) async throws {
        let operation = query.hasPrefix("query One") ? "Two" : nil
        let (direct, executor) = try await answers(
            query, variables: ["q": .string("name BEGINSWITH 'o' OR name == ''")], operation: operation)
        #expect(!executor.contains("\"errors\""), "\(executor)")
        #expect(direct == executor)
    }

    /// Things get an ACL that lets u1 read 1 and 3 (not 2), and nobody may query Kind (its
    /// objects still read through links).
    static func restrict(_ store: RealmStore) throws {
        try store.write(to: "/t", origin: "test") { tx in
            try tx.enablePermissions()
            let acl = Property(name: "permissions", type: .list(.link(PermissionTypes.permission)))
            try tx.addProperties([acl], to: "Thing")
            for id in [1, 3] {
                try tx.setPrivileges(
                    [.read], granted: true, role: "__User:u1", on: .object("Thing", .int(Int64(id))), by: .unrestricted)
            }
            try tx.setPrivileges([.query], granted: false, role: "everyone", on: .type("Kind"), by: .unrestricted)
        }
    }

    /// Under fine-grained permissions, the direct answers are still the executor's: both hide
    /// what the viewer may not read, at every depth.
    @Test(arguments: plain) func plainQueriesUnderPermissionsAreAnsweredAsTheExecutorWould(_ query: String)
        async throws
    {
        let operation = query.hasPrefix("query One") ? "Two" : nil
        let (direct, executor) = try await answers(
            query, variables: ["q": .string("name BEGINSWITH 'o' OR name == ''")], operation: operation,
            restricted: true)
        #expect(!executor.contains("\"errors\""), "\(executor)")
        #expect(direct == executor)
        #expect(!executor.contains("\"id\":2") && !executor.contains(#""name":"""#), "\(executor)")
    }

    @Test func intsAsFloatsAndVariablesOfEveryKind() async throws {
        let (direct, executor) = try await answers(
            "query($id: Float!, $t: Int) { thing(id: $id) { big id } things(take: $t) { big } }",
            variables: ["id": .int(3), "t": .null], floats: true)
        #expect(direct != nil && direct == executor, "\(executor)")
    }

    /// GraphQLSwift's executor fails on a null in a list: it gets the list without them, and
    /// only the direct answer keeps them.
    @Test func nullsInListsAreKept() async throws {
        let (direct, executor) = try await answers(
            "{ thing(id: 1) { marks } }",
            extra:
                #"[{"type": "LIST_SET", "object_type": "Thing", "identity": 1, "property": "marks", "#
                + #""list_index": 1, "value": null}]"#
        )
        #expect(direct == #"{"data":{"thing":{"marks":[1,null,-2147483648]}}}"# + "\n")
        #expect(executor == #"{"data":{"thing":{"marks":[1,-2147483648]}}}"# + "\n")
    }

    /// A float that is not finite (NaN, an infinity) is left to the executor, as a double's is.
    @Test(arguments: [Float.nan, .infinity]) func floatsThatAreNotFiniteAreLeftToTheExecutor(_ f: Float) async throws {
        let (direct, _) = try await answers(
            "{ thing(id: 2) { ratio } }", then: [.set(objectType: "Thing", identity: 2, values: ["ratio": .float(f)])])
        #expect(direct == nil)
    }

    @Test(arguments: notPlain) func everythingElseIsLeftToTheExecutor(_ query: String) async throws {
        let (direct, _) = try await answers(query)
        #expect(direct == nil)
    }
}
