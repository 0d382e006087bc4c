import Foundation
import GRDBSQLite
import Testing

@testable import RealmAdapter

/// Errors come from named factories: a code and context to branch on, a message to show, and the
/// error they report kept as `underlying`.
@Suite struct ErrorTests {
    @Test func aStoreThatCannotOpenKeepsSQLitesError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-store-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: directory + "/realms.sqlite"))
        #expect {
            _ = try RealmStore(directory: directory)
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.code == .storeUnavailable && e?.context["store"] == directory
                && (e?.underlying as? StoreError)?.code == "sqlite \(SQLITE_NOTADB)"
        }
    }

    @Test func aStoreDirectoryThatCannotBeMadeKeepsTheFileSystemsError() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("a-file-\(UUID())").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect {
            _ = try RealmStore(directory: file + "/store")
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.code == .storeUnavailable && e?.context["store"] == file + "/store" && e?.underlying != nil
        }
    }

    @Test func locatingAnErrorKeepsItsCodeAndCauseAndSaysWhere() {
        let cause = RealmAdapterError.storeFailed(
            StoreError(.failed, code: "sqlite \(SQLITE_FULL)", message: "disk full"))
        let e = cause.located("Task.title", ["type": "Task", "store.code": "replaced"])
        #expect(e.code == .storeUnavailable && e.underlying != nil)
        #expect(e.context == ["type": "Task", "store.code": "replaced"], "the place's context wins")
        #expect(e.message.hasPrefix("Task.title: "))
        #expect(e != cause && e == cause.located("Task.title", ["type": "Task", "store.code": "replaced"]))
    }

    @Test func aRowErrorNamesTableColumnAndKeyButNeverATextKey() {
        let e = RealmAdapterError.expected("int", found: "string")
        let numbered = e.inColumn(table: "bus", column: "seats", key: 8)
        #expect(numbered.context == ["db.table": "bus", "db.column": "seats", "value.kind": "string"])
        #expect(numbered.message == "Table bus, column seats, row with key 8: expected int, found string.")
        let texted = e.inColumn(table: "bus", column: "seats", key: "secret-plate")
        #expect(!texted.message.contains("secret-plate"))
    }

    @Test func aRejectedTransactionNamesTheInstructionInItsContext() {
        let cause = RealmAdapterError.unknownType("Ghost")
        let e = RealmAdapterError.rejected(
            cause, path: "/a", index: 3, instruction: .clear(objectType: "Ghost"))
        #expect(e.code == .schemaViolation)
        #expect(e.context == ["type": "Ghost", "realm.path": "/a", "instruction": "3"])
    }
}
