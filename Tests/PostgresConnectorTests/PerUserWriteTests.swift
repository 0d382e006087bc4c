import Foundation
import PostgresConnector
import RealmAdapter
import TestSupport
import Testing

extension PostgresIntegration {
    /// What a per-user Realm's transactions may do to the database: its own rows only.
    @Suite struct PerUserWriteTests {
        static let schema = """
            [{"name": "todo", "primaryKey": "id",
              "properties": {"id": "string", "owner": "string?", "title": "string"}}]
            """

        /// A probe's app, writing in /u1/todos, overwrote u2's row by creating an object of its key
        /// (with u2 as its owner, or with none), changed its title and deleted it. The same through
        /// the bulk statements, which a run of creations takes.
        @Test func aRealmsWritesNeverReachAnotherUsersRowOfTheSameKey() async throws {
            try await TestServer.withFreshDatabase(#function) { settings in
                let pg = try await PostgresConnection.connect(settings)
                defer { pg.close() }
                _ = try await pg.sql(
                    """
                    CREATE TABLE todo (id text PRIMARY KEY, owner text, title text NOT NULL);
                    INSERT INTO todo SELECT 't' || i, 'u2', 'theirs' FROM generate_series(1, 100) i
                    """)
                let config = try SyncHarness.config(
                    settings, store: NSTemporaryDirectory() + "unused", schema: Self.schema, path: "/{owner}/todos",
                    createSchema: false)
                let mapping = try Mapping(config)
                let connector = PostgresConnector(configuration: config.database!, logger: .init(label: "t"))
                try await connector.prepare(mapping)
                var version: Int64 = 0
                func apply(_ instructions: [Instruction]) async throws {
                    version += 1
                    try await connector.apply(
                        try mapping.databaseWrites(instructions, path: "/u1/todos", list: { _, _, _ in [] }),
                        adapter: "pg", path: "/u1/todos", version: version)
                }
                func insert(_ id: Int, owner: Value?) -> Instruction {
                    var values: PropertyValues = ["id": .string("t\(id)"), "title": "mine"]
                    if let owner { values["owner"] = owner }
                    return .insert(objectType: "todo", identity: .string("t\(id)"), values: values)
                }
                for owner: Value? in ["u2", nil, "u1"] {
                    await #expect(throws: PostgresError.self, "owner \(String(describing: owner))") {
                        try await apply([insert(1, owner: owner)])
                    }
                }
                await #expect(throws: PostgresError.self, "a run of them") {
                    try await apply((1...100).map { insert($0, owner: "u2") })
                }
                try await apply([
                    .set(objectType: "todo", identity: "t2", values: ["title": "mine now"]),
                    .delete(objectType: "todo", identity: "t3"),
                ])
                let rows = try await pg.sql("SELECT count(*), min(owner), max(owner), max(title) FROM todo")
                #expect(rows == [["100", "u2", "u2", "theirs"]])
                // A key no row has is the Realm's to create, and then to change.
                try await apply([
                    insert(101, owner: nil), .set(objectType: "todo", identity: "t101", values: ["title": "new"]),
                ])
                #expect(try await pg.sql("SELECT owner, title FROM todo WHERE id = 't101'") == [["u1", "new"]])
            }
        }
    }
}
