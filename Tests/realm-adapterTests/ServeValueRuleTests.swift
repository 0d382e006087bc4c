import Foundation
import Testing

/// Issue 41's GraphQL findings, through a real client (gql) against `serve`: an update, a
/// delete by query and an int sent as a Float each store exactly what was sent or refuse it;
/// nothing reaches another object.
@Suite(.serialized) struct ServeValueRuleTests {
    typealias Server = ServeTests.Server

    /// `updatePolicy: MODIFIED` stored "a\0b" as "a"; `deleteStops(query:)` with a literal
    /// holding NUL deleted the object whose key is the text before it.
    @Test func aNulInAnUpdateOrADeleteQueryIsRefused() async throws {
        let s = try await Server()
        try await s.start()
        let alice = try await s.login("alice")
        let update = try await s.graphQL(
            "/shop", alice,
            #"mutation M($n: String!) { createStop(input: {id: 1, name: $n}, updatePolicy: MODIFIED) { name } }"#,
            variables: #"{"n": "Dep\u0000ot"}"#)
        #expect(update.contains("errors") && update.contains("NUL") && update.contains("Stop.name"), "\(update)")
        let delete = try await s.graphQL(
            "/shop", alice, #"mutation M($q: String!) { deleteRoutes(query: $q) }"#,
            variables: #"{"q": "id == 'R1\u0000zzz'"}"#)
        #expect(delete.contains("errors") && delete.contains("NUL"), "\(delete)")
        let dump = try await s.cli(["realm", "dump", "/shop", "--store", s.dir + "/store"]).stdout
        #expect(dump.contains(#""Depot""#) && dump.contains(#""R1""#), "\(dump)")
    }

    /// With ints shown as Floats, 9007199254740993 arrives as the double 9007199254740992: it
    /// was stored so; from 2^53 on it is refused, below it stored exactly.
    @Test func anIntPast2To53AsAFloatIsRefused() async throws {
        let s = try await Server(server: #", "presentIntsAsFloatsInSchema": true"#)
        try await s.start()
        let alice = try await s.login("alice")
        let past = try await s.graphQL(
            "/shop", alice, #"mutation { createStop(input: {id: 9007199254740993.0, name: "far"}) { id } }"#)
        #expect(past.contains("errors") && past.contains("2^53"), "\(past)")
        let exact = try await s.graphQL(
            "/shop", alice, #"mutation { createStop(input: {id: 9007199254740991.0, name: "edge"}) { id } }"#)
        #expect(exact.contains("9007199254740991"), "\(exact)")
    }

    /// A Float literal a double holds as 0 was stored as 0.0; a query literal a double rounds to
    /// 1 deleted object 1 (a probe's findings).
    @Test func numbersADoubleWouldChangeAreRefused() async throws {
        let s = try await Server()
        try await s.start()
        let alice = try await s.login("alice")
        let tiny = try await s.graphQL(
            "/shop", alice, #"mutation { createRoute(input: {id: "R9", rank: 1e-400}) { rank } }"#)
        #expect(tiny.contains("errors") && tiny.contains("input.rank"), "\(tiny)")
        let near = try await s.graphQL(
            "/shop", alice, #"mutation { deleteStops(query: "id == 0.99999999999999999999") }"#)
        #expect(near.contains("errors"), "\(near)")
        let dump = try await s.cli(["realm", "dump", "/shop", "--store", s.dir + "/store"]).stdout
        #expect(dump.contains(#""Depot""#) && !dump.contains(#""R9""#), "\(dump)")
    }
}
