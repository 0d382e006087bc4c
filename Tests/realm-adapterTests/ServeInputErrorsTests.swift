import Foundation
import TestSupport
import Testing

/// What a client is told when its input is wrong: which field, which argument, which part of a
/// variable, and what was expected, through a GraphQL client nobody here wrote (gql) and curl.
@Suite(.serialized) struct ServeInputErrorsTests {
    /// The shop's server with a Realm /tasks of a type with a boolean, an int and a string.
    static func server() async throws -> ServeTests.Server {
        let s = try await ServeTests.Server()
        try """
        [{"type": "ADD_TYPE", "object_type": "Task", "primary_key": "id",
          "properties": {"id": "int", "done": "bool", "title": "string?"}},
         {"type": "INSERT", "object_type": "Task", "identity": 1, "values": {"id": 1, "done": false}}]
        """.write(toFile: s.dir + "/tasks.json", atomically: true, encoding: .utf8)
        let applied = try await s.cli([
            "realm", "apply", "/tasks", "--file", s.dir + "/tasks.json", "--store", s.dir + "/store",
        ])
        #expect(applied.status == 0, "\(applied.stderr)")
        try await s.start()
        return s
    }

    /// A literal of the wrong type names the field and the argument's path: before, it was
    /// GraphQL's `Boolean cannot represent a non-boolean value: 1`, naming neither.
    @Test func literalsOfTheWrongTypeNameTheFieldAndThePath() async throws {
        let s = try await Self.server()
        let alice = try await s.login("alice")
        let cases = [
            (
                "mutation { createTask(input: {id: 2, done: 1}) { id } }",
                "createTask(input.done): expected Boolean, found an integer"
            ),
            (
                #"mutation { createRoute(input: {id: "R9", tags: ["a", 2]}) { id } }"#,
                "createRoute(input.tags[1]): expected String, found an integer"
            ),
            ("{ stops(descending: 1) { id } }", "stops(descending): expected Boolean, found an integer"),
        ]
        for (query, says) in cases {
            let path = query.contains("Task") ? "/tasks" : "/shop"
            let r = try await s.graphQL(path, alice, query)
            #expect(r.contains(says), "\(r)")
        }
    }

    /// A variable is taken as its declared type only: `1` is not a Boolean, `2.5` not an Int, `5`
    /// not a String. Before, GraphQLSwift's coercion took `1` for true and stored it.
    @Test func variablesAreTakenStrictly() async throws {
        let s = try await Self.server()
        let alice = try await s.login("alice")
        let flag = "mutation M($d: Boolean!) { createTask(input: {id: 2, done: $d}) { done } }"
        let byInput = "mutation M($t: TaskInput!) { createTask(input: $t) { done } }"
        let cases = [
            (flag, #"{"d": 1}"#, "$d: expected Boolean, found an integer"),
            (byInput, #"{"t": {"id": 2, "done": "yes"}}"#, "$t.done: expected Boolean, found a string"),
            (byInput, #"{"t": {"id": 2.5, "done": true}}"#, "$t.id: expected Int, found a number"),
            (byInput, #"{"t": {"id": 2, "done": true, "title": 5}}"#, "$t.title: expected String, found an integer"),
            (
                "{ stops(descending: $d) { id } }".replacingOccurrences(
                    of: "{ stops", with: "query Q($d: Boolean) { stops"),
                #"{"d": 0}"#, "$d: expected Boolean, found an integer"
            ),
        ]
        for (query, variables, says) in cases {
            let path = query.contains("Task") ? "/tasks" : "/shop"
            let r = try await s.graphQL(path, alice, query, variables: variables)
            #expect(r.contains(says) && !r.contains(#""createTask": {"#), "\(r)")
        }
        let dump = try await s.cli(["realm", "dump", "/tasks", "--type", "Task", "--store", s.dir + "/store"])
        #expect(!dump.stdout.contains(#""id":2"#), "a wrong variable was stored: \(dump.stdout)")
        // The right types go through.
        let fine = try await s.graphQL(
            "/tasks", alice, byInput, variables: #"{"t": {"id": 2, "done": true, "title": "T"}}"#)
        #expect(fine == #"{"data": {"createTask": {"done": true}}}"#, "\(fine)")
    }

    /// A body or a `variables` parameter that is not JSON says where it stops being JSON: before,
    /// only that it was not.
    @Test func badJSONSaysWhereAndWhy() async throws {
        let s = try await Self.server()
        let alice = try await s.login("alice")
        let body = try await s.curl("POST", "/graphql/shop", #"{"query": "{ stops { id } }",}"#, token: alice)
        #expect(body.status == 400 && body.body.contains("line 1, column"), "\(body.body)")
        #expect(body.body.contains("POST a JSON object"), "\(body.body)")
        let get = try await s.curl(
            "GET", "/graphql/shop?query=%7B+stops+%7B+id+%7D+%7D&variables=%7B%22a%22%3A", token: alice)
        #expect(
            get.status == 400 && get.body.contains("line 1, column") && get.body.contains("variables"), "\(get.body)")
    }
}
