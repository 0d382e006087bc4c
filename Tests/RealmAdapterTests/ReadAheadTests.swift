import Testing

@testable import RealmAdapter

/// The daemon's catching up: transactions read ahead of the one being applied, and runs of
/// others' transactions merged into one store transaction.
struct ReadAheadTests {
    func tx(
        _ position: Int, changes: Int, own: Bool = false, part: Bool = false, readBack: [String: [String]] = [:]
    ) -> DatabaseTransaction {
        let rows = (0..<changes).map { RowChange.insert(table: "t", row: DatabaseRow(["id": .int(Int64($0))])) }
        return DatabaseTransaction(
            position: String(format: "%04d", position), isOwn: own, changes: rows, token: UInt64(position),
            markers: own ? [AppliedMarker(adapter: "a", path: "/p", version: 1)] : [], readBack: readBack,
            isPart: part)
    }

    @Test func runsOfOthersTransactionsMergeUpToTheLimitAndOwnOnesAndPartsStayAlone() {
        let arrived = [
            tx(1, changes: 2, readBack: ["t": ["g"]]), tx(2, changes: 1, readBack: ["t": ["h", "g"]]),
            tx(3, changes: 1, own: true), tx(4, changes: 1), tx(5, changes: 3_000), tx(6, changes: 3_000),
            tx(7, changes: 9_000), tx(8, changes: 10, part: true), tx(9, changes: 10, part: true), tx(10, changes: 1),
        ]
        let runs = DatabaseTransaction.mergingRuns(arrived, maxChanges: 5_000)
        #expect(runs.map { $0.originals.map(\.token) } == [[1, 2], [3], [4, 5], [6], [7], [8], [9], [10]])
        #expect(runs.map(\.merged.position) == ["0002", "0003", "0005", "0006", "0007", "0008", "0009", "0010"])
        #expect(runs.map(\.merged.changes.count) == [3, 1, 3_001, 3_000, 9_000, 10, 10, 1])
        #expect(runs[0].merged.changes == arrived[0].changes + arrived[1].changes)
        #expect(runs[0].merged.readBack["t"].map(Set.init) == ["g", "h"])
        #expect(runs[1].merged.isOwn && runs[1].merged.markers.count == 1)
    }

    /// A replay after a restart: a Realm may hold the transactions up to the position recorded
    /// when the stream started, another not. Those go alone (each Realm skips what it holds by
    /// position); merged, a Realm holding the first of a run would get it again.
    @Test func transactionsAtOrBeforeTheRecordedPositionStayAlone() {
        let arrived = (1...6).map { tx($0, changes: 1) }
        let runs = DatabaseTransaction.mergingRuns(arrived, maxChanges: 5_000, after: "0003")
        #expect(runs.map { $0.originals.map(\.token) } == [[1], [2], [3], [4, 5, 6]])
    }

    @Test func everyElementArrivesOnceInOrderAndTheEndAfterThem() async throws {
        let (stream, input) = AsyncStream.makeStream(of: Int.self)
        let ahead = ReadAhead(stream, limit: 8)
        async let pumped: Void = ahead.run()
        for i in 0..<100 { input.yield(i) }
        input.finish()
        var taken: [Int] = []
        while case let batch = try await ahead.next(atMost: 5), !batch.isEmpty {
            #expect(batch.count <= 5)
            taken += batch
        }
        await pumped
        #expect(taken == Array(0..<100))
        #expect(try await ahead.next(atMost: 5).isEmpty)
    }

    @Test func aFailureComesAfterTheElementsBeforeIt() async throws {
        struct Broken: Error {}
        let (stream, input) = AsyncThrowingStream.makeStream(of: Int.self)
        let ahead = ReadAhead(stream, limit: 100)
        input.yield(1)
        input.yield(2)
        input.finish(throwing: Broken())
        await ahead.run()
        #expect(try await ahead.next(atMost: 10) == [1, 2])
        await #expect(throws: Broken.self) { try await ahead.next(atMost: 10) }
    }

    @Test func closingEndsAPumpThatWaitsForRoom() async throws {
        let (stream, input) = AsyncStream.makeStream(of: Int.self)
        let ahead = ReadAhead(stream, limit: 2)
        for i in 0..<10 { input.yield(i) }  // never finished: only close() ends the pump
        let pump = Task { await ahead.run() }
        #expect(try await ahead.next(atMost: 1) == [0])
        ahead.close()
        await pump.value
    }

    @Test func cancellingTheConsumersTaskEndsItsWait() async throws {
        let (stream, _) = AsyncStream.makeStream(of: Int.self)
        let ahead = ReadAhead(stream, limit: 2)
        let consumer = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await ahead.run() }
                defer { ahead.close() }
                return try await ahead.next(atMost: 1)
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        consumer.cancel()
        #expect(try await consumer.value.isEmpty)
    }
}
