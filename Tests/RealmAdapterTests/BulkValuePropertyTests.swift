import Foundation
import PropertyBased
import Testing

@testable import RealmAdapter

/// The value rule through the store's bulk path: a run of INSERTs stored many rows per statement
/// (on Postgres, sent as one `COPY`), their values and keys of every kind, ordinary or hostile
/// (tabs, line ends, backslashes, `\N`), is stored as each sample means and as history keeps it.
@Suite struct BulkValuePropertyTests {
    /// Rows per run: more than a Postgres `COPY` takes at least.
    static let rows = 80

    @Test(arguments: StoreKind.all) func aRunOfInsertsStoresEveryValueAsItMeans(_ store: StoreKind) async throws {
        await propertyCheck(
            count: 12, input: Gen.element(of: ValueSample.Kind.allCases), Gen.int64(in: 0...(Int64.max / 2))
        ) { kind, seed in
            do { try check(kind!, seed: UInt64(seed), store) } catch { Issue.record("\(kind!) from \(seed): \(error)") }
        }
    }

    func check(_ kind: ValueSample.Kind, seed: UInt64, _ storeKind: StoreKind) throws {
        let samples = Self.stored(kind, from: seed)
        try #require(samples.count == Self.rows, "too few samples of \(kind) are stored")
        let t = try TemporaryStore(storeKind)
        let k = kind.rawValue
        let properties = #"{"id": "int", "v": "\#(k)?"}"#
        var instructions = [
            #"{"type": "ADD_TYPE", "object_type": "P", "primary_key": "id", "properties": \#(properties)}"#
        ]
        instructions += samples.enumerated().map { i, s in
            #"{"type": "INSERT", "object_type": "P", "identity": \#(i), "values": {"id": \#(i), "v": \#(s.json)}}"#
        }
        // Keys of the kind: one object per distinct key. Distinct by bytes: Swift's `String`
        // equality would take "é" and "e\u{301}" as one key, the store and `Value` as two.
        var keys: [[UInt8]: ValueSample] = [:]
        if kind.canBePrimaryKey {
            for s in samples { keys[Array(s.json.utf8)] = s }
            instructions.append(
                #"{"type": "ADD_TYPE", "object_type": "K", "primary_key": "id", "properties": {"id": "\#(k)"}}"#)
            instructions += keys.values.map(\.json).sorted().map { j in
                #"{"type": "INSERT", "object_type": "K", "identity": \#(j), "values": {"id": \#(j)}}"#
            }
        }
        try t.applyJSON("[\(instructions.joined(separator: ",\n"))]", to: "/bulk")

        var history: [Value: Value] = [:]
        for case .insert("P", let id, let values) in try t.store.history(of: "/bulk").flatMap(\.instructions) {
            history[id] = values["v"]
        }
        for (i, sample) in samples.enumerated() {
            let kept = try t.store.object(of: "P", identity: .int(Int64(i)), in: "/bulk")?.values["v"]
            #expect(kept.map(sample.means) == true, "\(sample) in row \(i) was stored as \(String(describing: kept))")
            if let kept, let h = history[.int(Int64(i))] {
                #expect(h == kept || (h.isNaN && kept.isNaN), "store \(kept) and history \(h) disagree")
            }
        }
        guard kind.canBePrimaryKey else { return }
        let stored = try t.store.objects(of: "K", in: "/bulk").compactMap { $0.values["id"] }
        #expect(stored.count == keys.count)
        for sample in keys.values {
            #expect(stored.contains(where: sample.means), "key \(sample) was not stored as itself")
            let found = try stored.first(where: sample.means).flatMap {
                try t.store.object(of: "K", identity: $0, in: "/bulk")
            }
            #expect(found != nil, "key \(sample) is not found by its value")
        }
    }

    /// ``rows`` samples of `kind` that must be stored, from `seed` on.
    static func stored(_ kind: ValueSample.Kind, from seed: UInt64) -> [ValueSample] {
        var samples: [ValueSample] = []
        var next = seed
        for _ in 0..<(Self.rows * 50) where samples.count < Self.rows {
            let sample = ValueSample(kind, seed: next)
            next &+= 1
            if sample.expectation == .stored { samples.append(sample) }
        }
        return samples
    }
}
