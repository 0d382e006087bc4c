import Foundation
import Testing

/// The legacy GraphQL service's shape beyond plain queries: `_linkingObjects` and `linkingObjects`
/// properties, and `presentIntsAsFloatsInSchema`. The client (gql) reads the schema by
/// introspection and validates each operation against it itself.
@Suite(.serialized) struct ServeSchemaShapeTests {
    typealias Server = ServeTests.Server

    /// Authors and their books: `Book.author` links, `Author.books` is its `linkingObjects`.
    static let library = """
        [{"type": "ADD_TYPE", "object_type": "Author", "primary_key": "id",
          "properties": {"id": "int", "name": "string"}},
         {"type": "ADD_TYPE", "object_type": "Book", "primary_key": "id",
          "properties": {"id": "int", "title": "string", "author": "Author"}},
         {"type": "ADD_PROPERTIES", "object_type": "Author",
          "properties": {"books": {"type": "linkingObjects", "objectType": "Book", "property": "author"}}},
         {"type": "INSERT", "object_type": "Author", "identity": 1, "values": {"id": 1, "name": "Le Guin"}},
         {"type": "INSERT", "object_type": "Author", "identity": 2, "values": {"id": 2, "name": "Lem"}},
         {"type": "INSERT", "object_type": "Book", "identity": 10,
          "values": {"id": 10, "title": "The Dispossessed", "author": 1}},
         {"type": "INSERT", "object_type": "Book", "identity": 11,
          "values": {"id": 11, "title": "The Lathe of Heaven", "author": 1}},
         {"type": "INSERT", "object_type": "Book", "identity": 12,
          "values": {"id": 12, "title": "Solaris", "author": 2}}]
        """

    @Test func linkingObjectsListWhatLinksToAnObject() async throws {
        let s = try await Server()
        try Self.library.write(toFile: s.dir + "/library.json", atomically: true, encoding: .utf8)
        let applied = try await s.cli([
            "realm", "apply", "/library", "--file", s.dir + "/library.json", "--store", s.dir + "/store",
        ])
        try #require(applied.status == 0, "\(applied.stderr)")
        try await s.start()
        let alice = try await s.login("alice")

        // Through a list of links and through a link, with the legacy union of collections.
        let viaList = """
            { stop(id: 2) { _linkingObjects(objectType: "Route", property: "stops") {
                ... on RouteCollection { count items { id } } } } }
            """
        #expect(
            try await s.graphQL("/shop", alice, viaList, validated: true)
                == #"{"data": {"stop": {"_linkingObjects": {"count": 1, "items": [{"id": "R1"}]}}}}"#)
        let viaLink = """
            { stops(sortBy: "id") { id _linkingObjects(objectType: "Route", property: "first") {
                __typename ... on RouteCollection { count } } } }
            """
        #expect(
            try await s.graphQL("/shop", alice, viaLink, validated: true)
                == #"{"data": {"stops": [{"_linkingObjects": {"__typename": "RouteCollection", "count": 0}, "id": 1}, "#
                + #"{"_linkingObjects": {"__typename": "RouteCollection", "count": 1}, "id": 2}, "#
                + #"{"_linkingObjects": {"__typename": "RouteCollection", "count": 0}, "id": 3}]}}"#)

        // Filtered, sorted and paged by SQLite; count is every match, items the page.
        let paged = """
            { author(id: 1) { _linkingObjects(objectType: "Book", property: "author", query: "title BEGINSWITH 'The'",
                sortBy: "title", descending: true, take: 1) { ... on BookCollection { count items { title } } } } }
            """
        #expect(
            try await s.graphQL("/library", alice, paged, validated: true)
                == #"{"data": {"author": {"_linkingObjects": {"count": 2, "#
                + #""items": [{"title": "The Lathe of Heaven"}]}}}}"#
        )

        // A linkingObjects property of the schema is a field, and follows changes.
        let books = #"{ authors(sortBy: "id") { name books { title } } }"#
        #expect(
            try await s.graphQL("/library", alice, books, validated: true)
                == #"{"data": {"authors": [{"books": [{"title": "The Dispossessed"}, "#
                + #"{"title": "The Lathe of Heaven"}], "name": "Le Guin"}, {"books": [{"title": "Solaris"}], "#
                + #""name": "Lem"}]}}"#)
        _ = try await s.graphQL(
            "/library", alice, #"mutation { createBook(input: {id: 10, author: 2}, updatePolicy: MODIFIED) { id } }"#)
        #expect(
            try await s.graphQL("/library", alice, #"{ author(id: 2) { books { id } } }"#)
                == #"{"data": {"author": {"books": [{"id": 10}, {"id": 12}]}}}"#)

        // What does not link here is an error that says so; a linkingObjects property is not an input.
        let wrong = try await s.graphQL(
            "/shop", alice, #"{ stop(id: 1) { _linkingObjects(objectType: "Stop", property: "name") { __typename } } }"#
        )
        #expect(wrong.contains("Stop.name is not a link or list of links to Stop in this Realm"), "\(wrong)")
        let input = try await s.graphQL(
            "/library", alice, #"mutation { createAuthor(input: {id: 3, name: "X", books: []}) { id } }"#,
            validated: true)
        #expect(input.contains("errors") && input.contains("books"), "\(input)")
        #expect(try await s.graphQL("/library", alice, "{ author(id: 3) { id } }") == #"{"data": {"author": null}}"#)

        // The SDL has the collections and their union.
        let sdl = try await s.curl("GET", "/graphql/schema/library", token: alice)
        #expect(
            sdl.body.contains("union _LinkingObjects = AuthorCollection | BookCollection")
                && sdl.body.contains("type BookCollection {\n  count: Int!\n  items: [Book!]!\n}")
                && sdl.body.contains("  books: [Book!]!\n"),
            "\(sdl.body)")
    }

    /// GraphQL's `Int` has 32 bits: with presentIntsAsFloatsInSchema, ints are `Float`s, exact to 2^53.
    @Test func intsAsFloatsCarryLargeValues() async throws {
        let s = try await Server(server: #", "presentIntsAsFloatsInSchema": true"#)
        try await s.start()
        let alice = try await s.login("alice")
        let big = 1 << 40
        let created = try await s.graphQL(
            "/shop", alice, "mutation { createStop(input: {id: \(big), name: \"Far\"}) { id } }", validated: true)
        #expect(created == #"{"data": {"createStop": {"id": \#(big).0}}}"#, "\(created)")  // a Float to the client
        #expect(
            try await s.graphQL("/shop", alice, "{ stop(id: \(big)) { name } }", validated: true)
                == #"{"data": {"stop": {"name": "Far"}}}"#)
        let fraction = try await s.graphQL(
            "/shop", alice, #"mutation { createStop(input: {id: 1.5, name: "X"}) { id } }"#)
        #expect(fraction.contains("Stop.id: expected int"), "\(fraction)")
        let sdl = try await s.curl("GET", "/graphql/schema/shop", token: alice)
        #expect(sdl.body.contains("type Stop {\n  id: Float!\n"), "\(sdl.body)")

        // Without the setting, a value past 32 bits is an error that names the setting.
        let plain = try await Server()
        let far =
            #"[{"type": "INSERT", "object_type": "Stop", "identity": \#(big), "#
            + #""values": {"id": \#(big), "name": "Far"}}]"#
        try far.write(toFile: plain.dir + "/far.json", atomically: true, encoding: .utf8)
        let applied = try await plain.cli([
            "realm", "apply", "/shop", "--file", plain.dir + "/far.json", "--store", plain.dir + "/store",
        ])
        try #require(applied.status == 0, "\(applied.stderr)")
        try await plain.start()
        let past = try await plain.graphQL(
            "/shop", try await plain.login("alice"), #"{ stops(query: "name == 'Far'") { id } }"#)
        #expect(
            past.contains("Stop.id is \(big), past GraphQL's 32-bit Int")
                && past.contains("server.presentIntsAsFloatsInSchema"), "\(past)")
    }
}
