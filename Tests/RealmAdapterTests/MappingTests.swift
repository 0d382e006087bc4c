import Foundation
import PostgresConnector
import Testing

@testable import RealmAdapter

@Suite struct MappingTests {
    static let config = try! Configuration(
        json: try! JSONValue(
            parsing: """
                {"realm": {"path": "/{owner_id}/tasks"},
                 "schema": [
                   {"name": "Person", "primaryKey": "id", "properties": {"id": "string", "name": "string?"}},
                   {"name": "Task", "primaryKey": "id", "properties": {
                      "id": "int", "title": "string", "done": {"type": "bool", "default": false}, "assignee": "Person",
                      "tags": "string[]", "cost": "decimal?", "due": "date?", "local": "string?", "watchers": "Person[]"}}],
                 "mapping": {"tables": {"task": "Task", "person": "Person"}, "columns": {"Task": {"task_title": "title"}},
                             "convert": {"Task": {"cost": "decimal", "due": "epochSeconds"}},
                             "ignoreProperties": {"Task": ["local"]}}}
                """), environment: [:], connectors: .postgres)
    let mapping = try! Mapping(config)

    /// A mapping of one routed type (`path` a template), as a configuration file gives it.
    static func routed(_ path: String, _ type: String, table: String, properties: String) throws -> Mapping {
        try Mapping(
            Configuration(
                json: try JSONValue(
                    parsing: """
                        {"realm": {"path": "\(path)"},
                         "schema": [{"name": "\(type)", "primaryKey": "id", "properties": \(properties)}],
                         "mapping": {"tables": {"\(table)": "\(type)"}}}
                        """), environment: [:], connectors: .postgres))
    }

    @Test func tablesAndColumnsFollowTheRenames() throws {
        let task = try #require(mapping.table(named: "task"))
        #expect(task.type.name == "Task")
        #expect(task.keyColumn == "id")
        #expect(task.columns.map(\.column) == ["id", "task_title", "done", "assignee", "tags", "cost", "due"])
        #expect(task.pathColumns == ["owner_id"])
        #expect(task.linkLists.map(\.table) == ["task_watchers"])
        #expect(mapping.table(forType: "Person")?.table == "person")
        #expect(mapping.table(named: "Task") == nil)
    }

    @Test func rowsBecomeObjectChangesRoutedByTheTemplate() throws {
        let row = DatabaseRow([
            "id": .int(7), "task_title": "Write", "done": .bool(true), "assignee": "ann", "tags": ["a", "b"],
            "cost": "$1,234.50", "due": .int(1_714_564_800), "owner_id": "u1", "unmapped": .int(3),
        ])
        let changes = try mapping.objectChanges(
            [
                .insert(table: "task", row: row),
                .update(
                    table: "task",
                    row: DatabaseRow(["id": .int(7), "task_title": "Rewrite", "owner_id": "u1"], missing: ["tags"]),
                    oldKey: nil),
                .insert(table: "ignored_table", row: DatabaseRow(["x": 1])),
                .insert(table: "person", row: DatabaseRow(["id": "bob", "name": .null, "owner_id": "u2"])),
                .delete(table: "task", key: DatabaseRow(["id": .int(7), "owner_id": "u1"])),
            ], paths: { [] })
        #expect(changes.map(\.path) == ["/u1/tasks", "/u2/tasks"])
        let u1 = changes[0].changes
        #expect(
            u1[0]
                == .upsert(
                    type: "Task", identity: 7,
                    values: [
                        "id": 7, "title": "Write", "done": true, "assignee": "ann", "tags": ["a", "b"],
                        "cost": .decimal("1234.50"), "due": .date(Timestamp(seconds: 1_714_564_800)),
                    ]))
        #expect(u1[1] == .upsert(type: "Task", identity: 7, values: ["id": 7, "title": "Rewrite"]))
        #expect(u1[2] == .delete(type: "Task", identity: 7))
        #expect(changes[1].changes == [.upsert(type: "Person", identity: "bob", values: ["id": "bob", "name": nil])])
    }

    /// Into another Realm, the object takes its lists of links along: their link-table rows did
    /// not change, so the stream carries none, and a probe saw the list empty in the new Realm
    /// while the database kept it.
    @Test func aKeyOrRealmChangeMovesTheObject() throws {
        let changes = try mapping.objectChanges(
            [
                .update(
                    table: "task", row: DatabaseRow(["id": .int(8), "task_title": "t", "owner_id": "u2"]),
                    oldKey: DatabaseRow(["id": .int(7), "task_title": "t", "owner_id": "u1"]))
            ], paths: { [] })
        #expect(changes.map(\.path) == ["/u1/tasks", "/u2/tasks"])
        #expect(changes[0].changes == [.delete(type: "Task", identity: 7)])
        #expect(changes[1].changes.last == .listChanged(type: "Task", identity: 8, property: "watchers"))
    }

    /// A row whose routing column held a value no Realm can hold (set aside when it came) is
    /// fixed in the database: the update brings it into its Realm, and the old row (under REPLICA
    /// IDENTITY FULL), in no Realm, takes nothing out of one (a probe found the fix set aside too).
    @Test func aRowWhoseRoutingIsFixedReachesItsRealm() throws {
        for bad: Value in [.null, "x/y", ""] {
            let changes = try mapping.objectChanges(
                [
                    .update(
                        table: "task", row: DatabaseRow(["id": .int(7), "task_title": "t", "owner_id": "u2"]),
                        oldKey: DatabaseRow(["id": .int(7), "task_title": "t", "owner_id": bad]))
                ], paths: { [] })
            #expect(changes.map(\.path) == ["/u2/tasks"], "\(bad)")
            #expect(changes.first?.changes == [.upsert(type: "Task", identity: 7, values: ["id": 7, "title": "t"])])
        }
    }

    @Test func badRowsNameTableColumnAndNeverTheValue() {
        #expect {
            try mapping.objectChanges(
                [.insert(table: "task", row: DatabaseRow(["id": .int(1), "task_title": .int(5), "owner_id": "u"]))],
                paths: { [] })
        } throws: { e in
            "\(e)".contains("Table task, column task_title, row with key 1") && "\(e)".contains("expected string")
        }
        #expect {
            try mapping.objectChanges([.delete(table: "task", key: DatabaseRow(["id": .int(1)]))], paths: { [] })
        } throws: { "\($0)".contains("REPLICA IDENTITY FULL") }
        #expect {
            try mapping.objectChanges(
                [.insert(table: "task", row: DatabaseRow(["id": .int(1), "cost": "secret-ish", "owner_id": "u"]))],
                paths: { [] })
        } throws: { !"\($0)".contains("secret-ish") }
    }

    /// "café" composed and decomposed name two Realms to the store but one to Swift's `String`
    /// (a dictionary of Realms by path, a grant by path): a routing column whose text is not in
    /// Unicode normalization form C makes its row one no Realm can hold.
    @Test func routingTextMustBeInNormalizationFormC() throws {
        func row(_ owner: String) -> DatabaseRow {
            DatabaseRow(["id": .int(1), "task_title": "a", "owner_id": .string(owner)])
        }
        let changes = try mapping.objectChanges([.insert(table: "task", row: row("caf\u{E9}"))], paths: { [] })
        #expect(changes.map(\.path) == ["/caf\u{E9}/tasks"])
        #expect {
            try mapping.objectChanges(
                [.insert(table: "task", row: row("caf\u{E9}")), .insert(table: "task", row: row("cafe\u{301}"))],
                paths: { [] })
        } throws: { "\($0)".contains("column owner_id") && "\($0)".contains("NFC") }
    }

    /// A routing column whose text makes no valid Realm path (a `.` or `..` segment, a control
    /// character or backslash, a path past 1024 bytes) makes its row one no Realm can hold, named
    /// by table and column without the value: a probe found the store's path error stopping the
    /// daemon for good instead, even with `ignoreSQLErrors`, and printing the whole value.
    @Test func routingTextThatMakesNoValidPathIsABadRow() throws {
        for bad in ["..", ".", "a\nb", "a\\b", String(repeating: "x", count: 1100)] {
            let row = DatabaseRow(["id": .int(1), "task_title": "a", "owner_id": .string(bad)])
            #expect(throws: RealmAdapterError.self, "\(bad.prefix(8))") {
                try mapping.objectChanges([.insert(table: "task", row: row)], paths: { [] })
            }
            #expect {
                try mapping.objectChanges([.insert(table: "task", row: row)], paths: { [] })
            } throws: { e in
                (e as? RealmAdapterError)?.code == .invalidValue && "\(e)".contains("Table task")
                    && "\(e)".contains("column owner_id") && (bad.count < 3 || !"\(e)".contains(bad))
            }
        }
    }

    /// A probe read "…expected string?, found int The change stream replays it…": the replay's
    /// advice came after a message that had no full stop of its own.
    @Test func aReplayedRowsErrorReadsAsSentences() {
        let e = RealmAdapterError.expected("string?", found: "int").replayed()
        #expect(e.message.hasPrefix("expected string?, found int. The change stream replays it"), "\(e.message)")
        #expect(!RealmAdapterError.malformed("a date.").replayed().message.contains(".."))
    }

    @Test func truncateClearsEveryRoutedRealm() throws {
        let changes = try mapping.objectChanges(
            [.truncate(tables: ["task", "elsewhere"])], paths: { ["/u1/tasks", "/u2/tasks", "/u1/other"] })
        #expect(changes.map(\.path) == ["/u1/tasks", "/u2/tasks"])
        #expect(changes[0].changes == [.clear(type: "Task")])
    }

    /// Fine-grained permissions are Realm data the database never gets: the metadata types and
    /// a mapped type's ACL property are not mapped, so their instructions write nothing.
    @Test func permissionMetadataNeverReachesTheDatabase() throws {
        let mapping = try Self.routed(
            "/{owner}/todos", "Todo", table: "todo", properties: #"{"id": "string", "title": "string"}"#)
        let acl = Property(name: "permissions", type: .list(.link(PermissionTypes.permission)))
        let writes = try mapping.databaseWrites(
            PermissionTypes.types.map(Instruction.addType) + [
                .addProperties(objectType: "Todo", properties: [acl]),
                .insert(objectType: PermissionTypes.role, identity: "everyone", values: ["name": "everyone"]),
                .insert(objectType: PermissionTypes.permission, identity: 1, values: ["role": "everyone"]),
                .insert(objectType: PermissionTypes.realm, identity: 0, values: ["id": 0, "permissions": [1]]),
                .listInsert(objectType: "Todo", identity: "t1", property: "permissions", index: 0, value: 1),
                .set(objectType: "Todo", identity: "t1", values: ["title": "kept", "permissions": [1]]),
                .listClear(objectType: "Todo", identity: "t1", property: "permissions"),
                .delete(objectType: PermissionTypes.role, identity: "everyone"),
            ], path: "/u1/todos", list: { _, _, _ in [] })
        #expect(
            writes == [
                .update(
                    table: "todo", key: DatabaseRow(["id": "t1", "owner": "u1"]), values: DatabaseRow(["title": "kept"])
                )
            ])
    }

    /// A routing column that is also a property scopes a Realm's writes as one that is not: a
    /// probe's app, writing in /u1/todos, updated and deleted u2's row by its key (and with a
    /// database key of (owner, id), every user's row of that id); an object created without the
    /// property got a NULL owner, which stopped the daemon on its own echo, and one created with
    /// another user's went to both Realms. A new object's row is its Realm's; a move is an update.
    @Test func aRoutingPropertyScopesTheRealmsWritesToItsRows() throws {
        let mapping = try Self.routed(
            "/{owner}/todos", "Todo", table: "todo",
            properties: #"{"id": "string", "owner": "string?", "title": "string"}"#)
        let writes = try mapping.databaseWrites(
            [
                .set(objectType: "Todo", identity: "t2", values: ["title": "mine now?"]),
                .delete(objectType: "Todo", identity: "t2"),
                .insert(objectType: "Todo", identity: "x1", values: ["id": "x1", "title": "no owner"]),
                .insert(objectType: "Todo", identity: "x2", values: ["id": "x2", "owner": nil, "title": "null"]),
                .insert(objectType: "Todo", identity: "x3", values: ["id": "x3", "owner": "u2", "title": "theirs"]),
                .set(objectType: "Todo", identity: "x1", values: ["owner": "u2"]),
            ], path: "/u1/todos", list: { _, _, _ in [] })
        #expect(
            writes == [
                .update(
                    table: "todo", key: DatabaseRow(["id": "t2", "owner": "u1"]),
                    values: DatabaseRow(["title": "mine now?"])),
                .delete(table: "todo", key: DatabaseRow(["id": "t2", "owner": "u1"])),
                .upsert(
                    table: "todo", keyColumns: ["id"],
                    row: DatabaseRow(["id": "x1", "owner": "u1", "title": "no owner"]), scope: ["owner"]),
                .upsert(
                    table: "todo", keyColumns: ["id"], row: DatabaseRow(["id": "x2", "owner": "u1", "title": "null"]),
                    scope: ["owner"]),
                .upsert(
                    table: "todo", keyColumns: ["id"],
                    row: DatabaseRow(["id": "x3", "owner": "u1", "title": "theirs"]),
                    scope: ["owner"]),
                // A move to another user's Realm: from this Realm's row only.
                .update(
                    table: "todo", key: DatabaseRow(["id": "x1", "owner": "u1"]), values: DatabaseRow(["owner": "u2"])),
            ])
    }

    /// An int routing column: a probe's app wrote in /007/items, the database stored 7, and the
    /// row came back to /7/items, one object in two Realms (and /abc/items stopped the daemon with
    /// the database's error). The path must give the value as the database writes it.
    @Test func anIntRoutingColumnTakesOnlyItsValuesText() throws {
        let mapping = try Self.routed(
            "/{uid}/items", "Item", table: "item", properties: #"{"id": "string", "uid": "int", "name": "string?"}"#)
        let insert = Instruction.insert(objectType: "Item", identity: "i2", values: ["id": "i2", "name": "n"])
        let writes = try mapping.databaseWrites([insert], path: "/7/items", list: { _, _, _ in [] })
        #expect(
            writes == [
                .upsert(
                    table: "item", keyColumns: ["id"], row: DatabaseRow(["id": "i2", "uid": .int(7), "name": "n"]),
                    scope: ["uid"])
            ])
        for path in ["/007/items", "/abc/items", "/+7/items"] {
            #expect(Comment(rawValue: path)) {
                try mapping.databaseWrites([insert], path: path, list: { _, _, _ in [] })
            } throws: { "\($0)".contains("column uid (int)") }
        }
    }

    @Test func instructionsBecomeDatabaseWrites() throws {
        let writes = try mapping.databaseWrites(
            [
                .insert(
                    objectType: "Task", identity: 7,
                    values: [
                        "id": 7, "title": "T", "done": false, "local": "mine", "due": .date(Timestamp(seconds: 100)),
                    ]),
                .set(objectType: "Task", identity: 7, values: ["local": "only local"]),
                .set(objectType: "Task", identity: 7, values: ["title": "U"]),
                .listInsert(objectType: "Task", identity: 7, property: "tags", index: 0, value: "x"),
                .listInsert(objectType: "Task", identity: 7, property: "tags", index: 1, value: "y"),
                .insert(objectType: "RealmOnly", identity: 1, values: [:]),
                .delete(objectType: "Task", identity: 7),
                .clear(objectType: "Person"),
            ], path: "/u9/tasks",
            list: { type, id, property in
                #expect(type == "Task" && id == 7 && property == "tags")
                return ["x", "y"]
            })
        #expect(
            writes == [
                .upsert(
                    table: "task", keyColumns: ["id"],
                    row: DatabaseRow([
                        "id": 7, "task_title": "T", "done": false, "due": .int(100), "tags": [], "owner_id": "u9",
                    ]), scope: ["owner_id"]),
                .update(
                    table: "task", key: DatabaseRow(["id": 7, "owner_id": "u9"]),
                    values: DatabaseRow(["task_title": "U"])),
                .update(
                    table: "task", key: DatabaseRow(["id": 7, "owner_id": "u9"]),
                    values: DatabaseRow(["tags": ["x", "y"]])),
                .deleteAll(table: "task_watchers", matching: DatabaseRow(["oid": 7])),
                .delete(table: "task", key: DatabaseRow(["id": 7, "owner_id": "u9"])),
                // Only this Realm's people; their link rows go by cascade, the lists close their gaps.
                .deleteAll(table: "person", matching: DatabaseRow(["owner_id": "u9"])),
                .closeGaps(table: "task_watchers"),
            ])
        // Realms outside the template sync nothing; a list of links is rewritten whole.
        #expect(
            try mapping.databaseWrites(
                [.delete(objectType: "Task", identity: 1)], path: "/elsewhere", list: { _, _, _ in [] }
            ).isEmpty)
        #expect(
            try mapping.databaseWrites(
                [.listClear(objectType: "Task", identity: 1, property: "watchers")], path: "/u1/tasks",
                list: { _, _, _ in [] })
                == [.deleteAll(table: "task_watchers", matching: DatabaseRow(["oid": 1]))])
    }

    @Test func typesWithoutPrimaryKeysCannotBeMapped() throws {
        #expect {
            try Mapping(
                schema: try Schema([ObjectSchema(name: "Loose", properties: [Property(name: "x", type: .scalar(.int))])]
                ),
                mapping: Self.config.mapping, path: try RealmPathTemplate("/a"))
        } throws: { "\($0)".contains("Loose: a synced type needs a primary key") }
    }
}

extension MappingTests {
    static func joinConfig(partType: String) throws -> Configuration {
        try Configuration(
            json: try JSONValue(
                parsing: """
                    {"realm": {"path": "/j"},
                     "schema": [
                       {"name": "Post", "primaryKey": "slug", "properties": {"slug": "string"}},
                       {"name": "Tag", "primaryKey": "name", "properties": {"name": "string"}},
                       {"name": "PostTag", "primaryKey": "id",
                        "properties": {"id": "string", "post": "Post", "tag": "Tag"}}],
                     "mapping": {"tables": {"post_tag": "PostTag"}, "compoundPrimaryKeys": {"PostTag": [
                       {"property": "post", "dbColumn": "post", "type": "\(partType)"},
                       {"property": "tag", "dbColumn": "tag", "type": "string"}]}}}
                    """), environment: [:], connectors: .postgres)
    }

    /// A join object's key joins its parts with "-": rows ("a-b", "c") and ("a", "b-c") would both
    /// be "a-b-c", one object silently overwriting the other. A part holding "-" makes its row a bad
    /// row, named by table and column; a uuid part is told by its shape, both ways.
    @Test func joinKeyPartsHoldingTheSeparatorAreBadRows() throws {
        let mapping = try Mapping(try Self.joinConfig(partType: "string"))
        let fine = try mapping.objectChanges(
            [.insert(table: "post_tag", row: DatabaseRow(["post": "a", "tag": "b"]))], paths: { [] })
        #expect(fine.first?.changes.first.map { if case .upsert(_, "a-b", _) = $0 { true } else { false } } == true)
        for row in [DatabaseRow(["post": "a", "tag": "b-c"]), DatabaseRow(["post": "a-b", "tag": "c"])] {
            #expect {
                try mapping.objectChanges([.insert(table: "post_tag", row: row)], paths: { [] })
            } throws: { error in
                let text = "\(error)"
                return (error as? RealmAdapterError)?.code == .invalidValue && text.contains("post_tag")
                    && text.contains("\"-\"") && !text.contains("b-c") && !text.contains("a-b")
            }
        }
        let byUUID = try Mapping(try Self.joinConfig(partType: "uuid"))
        let u = try #require(UUID(uuidString: "AAAAAAAA-2222-4333-8444-0000000000FF"))
        let joined = try byUUID.objectChanges(
            [.insert(table: "post_tag", row: DatabaseRow(["post": .uuid(u), "tag": "b"]))], paths: { [] })
        let key: Value = "aaaaaaaa-2222-4333-8444-0000000000ff-b"
        #expect(joined.first?.changes.first.map { if case .upsert(_, key, _) = $0 { true } else { false } } == true)
        // SQL Server prints a uniqueidentifier in upper case: the same key, not a second object.
        let upper = try byUUID.objectChanges(
            [
                .insert(
                    table: "post_tag", row: DatabaseRow(["post": "AAAAAAAA-2222-4333-8444-0000000000FF", "tag": "b"]))
            ],
            paths: { [] })
        #expect(upper.first?.changes.first.map { if case .upsert(_, key, _) = $0 { true } else { false } } == true)
        let table = try #require(byUUID.table(forType: "PostTag"))
        #expect(try byUUID.keyRow(table, key) == DatabaseRow(["post": .uuid(u), "tag": "b"]))
        #expect(throws: RealmAdapterError.self) { try byUUID.keyRow(table, "aaaaaaaa-2222-4333-8444-b") }
    }

    /// A join object created in the Realm whose parts link to types keyed by the database: its
    /// key holds the parts' database keys ("1-2"), and those go into the key columns as they are.
    /// Before, the columns kept the links' look-up by RealmId, which then compared a RealmId
    /// with 1 (found by the legacy Employee/Route example on Babelfish).
    @Test func aJoinObjectsKeyColumnsTakeItsDatabaseKeysWithoutALookUp() throws {
        let config = try Configuration(
            json: try JSONValue(
                parsing: """
                    {"realm": {"path": "/j"},
                     "schema": [
                       {"name": "Employee", "primaryKey": "RealmId", "databasePrimaryKey": "id",
                        "properties": {"RealmId": "string", "id": "int?"}},
                       {"name": "Route", "primaryKey": "RealmId", "databasePrimaryKey": "id",
                        "properties": {"RealmId": "string", "id": "int?"}},
                       {"name": "EmployeeRoute", "primaryKey": "key",
                        "properties": {"key": "string", "employee": "Employee", "route": "Route"}}],
                     "mapping": {"compoundPrimaryKeys": {"EmployeeRoute": [
                       {"property": "employee", "dbColumn": "employee_id", "type": "int"},
                       {"property": "route", "dbColumn": "route_id", "type": "int"}]}}}
                    """), environment: [:], connectors: .postgres)
        let mapping = try Mapping(config)
        let insert = Instruction.insert(
            objectType: "EmployeeRoute", identity: "1-2",
            values: ["key": "1-2", "employee": "rid-tom", "route": "rid-west"])
        let writes = try mapping.databaseWrites([insert], path: "/j", list: { _, _, _ in [] })
        guard case .upsert(_, _, let row, _)? = writes.first else {
            Issue.record("no upsert: \(writes)")
            return
        }
        #expect(row["employee_id"] == .int(1) && row["route_id"] == .int(2))
        #expect(row.references["employee_id"] == nil && row.references["route_id"] == nil)
    }
}
