import Foundation
import TestSupport
import Testing

@testable import RealmAdapter

/// Two other processes and this one write the same Realm at once.
@Suite struct MultiProcessTests {
    static var writerBinary: String { ChildProcess.built("store-writer") }

    /// Processes opening one new store at the same instant (two daemons started together) all
    /// open it: none fails while another creates it. Before, about 1 open in 90 failed ("database
    /// is locked", or a migration recorded twice), seen once in CI as a daemon that could not
    /// start (CrashWindowTests.aSecondDaemonStopsAtOnceWithAClearReason). Then, rarer, a process
    /// whose list of migrations to run was read before another ran two of them failed in the
    /// older one ("no such column: schema", CI of 9e08b88): only open errors were looked for.
    @Test(.timeLimit(.minutes(2)))
    func processesOpeningANewStoreAtOnceAllOpenIt() async throws {
        var failures: [String] = []
        for round in 0..<30 {
            let directory =
                NSTemporaryDirectory() + "realm-adapter-tests/opened-\(round)-\(UUID().uuidString.prefix(6))"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let logs = (0..<6).map { directory + "-\($0).log" }
            defer { for log in logs { try? FileManager.default.removeItem(atPath: log) } }
            // Each opens the store and writes nothing: any error is the open's.
            let writers = try logs.enumerated().map { i, log in
                try ChildProcess(Self.writerBinary, [directory, "/p", "w\(i)", "0"], stderr: log)
            }
            for (w, log) in zip(writers, logs) {
                let status = await w.wait()
                if status != 0 {
                    failures.append((try? String(contentsOfFile: log, encoding: .utf8)) ?? "exit \(status)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of 180 opens failed: \(failures.first ?? "")")
    }

    @Test(.timeLimit(.minutes(2)))
    func concurrentWritersLoseNothing() async throws {
        let t = try TemporaryStore()
        try t.store.addTaskSchema("/shared")
        let perWriter = 150
        var processes: [ChildProcess] = []
        for name in ["w1", "w2"] {
            processes.append(try ChildProcess(Self.writerBinary, [t.directory, "/shared", name, String(perWriter)]))
        }
        // Meanwhile this process follows the Realm and writes too.
        let adapter = try Adapter(store: t.store, name: "follower", pathRegex: ".*", compactionInterval: .max)
        var seen = Set<String>()
        for i in 0..<perWriter {
            try t.store.write(to: "/shared", origin: "w0") { tx in
                try tx.create("Person", ["id": .string("w0-\(i)")])
                try tx.create("Task", ["id": .int(Int64(i)), "title": "from w0", "owner": .string("w0-\(i)")])
            }
            while let tx = try adapter.current("/shared") {
                for case .insert("Person", .string(let id), _) in tx.instructions { seen.insert(id) }
                try adapter.advance("/shared")
            }
        }
        for p in processes { #expect(await p.wait() == 0) }
        while let tx = try adapter.current("/shared") {
            for case .insert("Person", .string(let id), _) in tx.instructions { seen.insert(id) }
            try adapter.advance("/shared")
        }
        #expect(try t.store.count(of: "Person", in: "/shared") == 3 * perWriter)
        #expect(try t.store.count(of: "Task", in: "/shared") == perWriter)
        #expect(seen.count == 3 * perWriter)
        let history = try t.store.history(of: "/shared")
        #expect(history.map(\.version) == Array(1...Int64(1 + 3 * perWriter)))
        #expect(try t.store.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }
}

extension MultiProcessTests {
    @Test(.timeLimit(.minutes(1)))
    func commitsInAnotherProcessAreNotifiedPromptly() async throws {
        let t = try TemporaryStore()
        try t.store.addTaskSchema("/watched")
        let adapter = try Adapter(store: t.store, name: "watcher", pathRegex: "^/watched$")
        while try adapter.current("/watched") != nil { try adapter.advance("/watched") }
        // The store's own change stream: no initial scan, so only a notification can answer.
        var changes = t.store.changes().makeAsyncIterator()
        let started = ContinuousClock.now
        let p = try ChildProcess(Self.writerBinary, [t.directory, "/watched", "other", "1"])
        #expect(await changes.next()?.path == "/watched")
        let waited = ContinuousClock.now - started
        #expect(await p.wait() == 0)
        #expect(try adapter.current("/watched")?.origin == "other")
        // Process start-up dominates; the store's poll interval is 10 ms.
        #expect(waited < .seconds(10))
    }
}
