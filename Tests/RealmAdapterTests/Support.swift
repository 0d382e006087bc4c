import Foundation

@testable import RealmAdapter

/// A fresh store directory per test, removed when the value goes away.
final class TemporaryStore {
    let directory: String
    let store: RealmStore

    init(_ name: String = #function) throws {
        directory =
            NSTemporaryDirectory()
            + "realm-adapter-tests/\(name.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8))"
        store = try RealmStore(directory: directory)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Applies a JSON transaction to the Realm at `path` as `realm apply` reads one (typed
    /// against the Realm's schema, its own schema changes followed).
    @discardableResult
    func applyJSON(_ json: String, to path: String) throws -> Int64 {
        let schema = try store.contains(path) ? try store.schema(of: path) : .empty
        let instructions = try Instruction.decodeTransaction(
            try JSONValue(parsing: json, errorCode: .invalidInstruction), schema: schema)
        return try store.apply(instructions, to: path, origin: "test")
    }
}

/// A schema exercising every property kind.
let taskSchema: [ObjectSchema] = [
    ObjectSchema(
        name: "Person", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.string)),
            Property(name: "name", type: .scalar(.string), isOptional: true),
        ]),
    ObjectSchema(
        name: "Task", primaryKey: "id",
        properties: [
            Property(name: "id", type: .scalar(.int)),
            Property(name: "title", type: .scalar(.string)),
            Property(name: "done", type: .scalar(.bool), defaultValue: false),
            Property(name: "owner", type: .link("Person")),
            Property(name: "watchers", type: .list(.link("Person"))),
            Property(name: "tags", type: .list(.scalar(.string))),
            Property(name: "due", type: .scalar(.date), isOptional: true),
            Property(name: "cost", type: .scalar(.decimal), isOptional: true),
            Property(name: "blob", type: .scalar(.data), isOptional: true),
            Property(name: "ratio", type: .scalar(.float), isOptional: true),
            Property(name: "score", type: .scalar(.double), isOptional: true),
            Property(name: "ref", type: .scalar(.uuid), isOptional: true),
            Property(name: "oid", type: .scalar(.objectId), isOptional: true),
        ]),
    ObjectSchema(
        name: "Note",
        properties: [
            Property(name: "text", type: .scalar(.string))
        ]),
]

extension RealmStore {
    /// Creates the test schema in a Realm.
    func addTaskSchema(_ path: String) throws {
        try apply(taskSchema.map(Instruction.addType), to: path, origin: "test")
    }
}
