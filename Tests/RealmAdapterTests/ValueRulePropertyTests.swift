import Foundation
import PropertyBased
import Testing

@testable import RealmAdapter

/// The value rule as a property: a value of any kind, ordinary or hostile, written through any
/// path (INSERT, SET, LIST_INSERT, a whole list, an ADD_PROPERTIES default, a primary key, a
/// DELETE identity) is stored exactly or refused with an error naming the property; what the
/// store keeps is what history keeps; a refused write leaves the Realm as it was; a DELETE
/// never removes another object. Samples come from ``ValueSample``, each knowing what its JSON
/// text means without the product's own parsers.
@Suite struct ValueRulePropertyTests {
    enum Path: CaseIterable, Sendable {
        case insert, set, listInsert, wholeList, addPropertiesDefault, primaryKey, delete
    }

    @Test func everyPathStoresExactlyOrRefuses() async throws {
        await propertyCheck(
            count: 200, input: Gen.element(of: ValueSample.Kind.allCases), Gen.element(of: Path.allCases),
            Gen.int64(in: 0...Int64.max)
        ) { kind, path, seed in
            let sample = ValueSample(kind!, seed: UInt64(seed))
            do { try check(sample, through: path!) } catch { Issue.record("\(sample) via \(path!): \(error)") }
        }
    }

    func check(_ sample: ValueSample, through path: Path) throws {
        let t = try TemporaryStore()
        let k = sample.kind.rawValue
        // K: objects keyed by the sample's kind, for the primary key and DELETE paths.
        let keyed =
            sample.kind.canBePrimaryKey
            ? #"{"type": "ADD_TYPE", "object_type": "K", "primary_key": "id", "properties": {"id": "\#(k)"}},"# : ""
        try apply(
            """
            [{"type": "ADD_TYPE", "object_type": "P", "primary_key": "id",
              "properties": {"id": "string", "v": "\(k)?", "l": "\(k)[]"}}, \(keyed)
             {"type": "INSERT", "object_type": "P", "identity": "o", "values": {"id": "o", "l": []}}]
            """, t)
        let json = sample.json
        let written: String
        switch path {
        case .insert:
            written = #"{"type": "INSERT", "object_type": "P", "identity": "n", "values": {"id": "n", "v": \#(json)}}"#
        case .set: written = #"{"type": "SET", "object_type": "P", "identity": "o", "values": {"v": \#(json)}}"#
        case .listInsert:
            written =
                #"{"type": "LIST_INSERT", "object_type": "P", "identity": "o", "property": "l", "list_index": 0, "value": \#(json)}"#
        case .wholeList: written = #"{"type": "SET", "object_type": "P", "identity": "o", "values": {"l": [\#(json)]}}"#
        case .addPropertiesDefault:
            written =
                #"{"type": "ADD_PROPERTIES", "object_type": "P", "properties": {"d": {"type": "\#(k)", "default": \#(json)}}}"#
        case .primaryKey, .delete:
            guard sample.kind.canBePrimaryKey else { return }
            if path == .delete { try seedNeighbours(of: sample, t) }
            written =
                path == .primaryKey
                ? #"{"type": "INSERT", "object_type": "K", "identity": \#(json), "values": {"id": \#(json)}}"#
                : #"{"type": "DELETE", "object_type": "K", "identity": \#(json)}"#
        }
        let keysBefore = try keys(t)
        let before = try t.store.history(of: "/p").count
        do {
            try apply("[\(written)]", t)
        } catch let e as RealmAdapterError {
            #expect(sample.expectation != .stored, "\(sample) via \(path) was refused: \(e.message)")
            #expect(try t.store.history(of: "/p").count == before, "a refused write left a transaction")
            #expect(try keys(t) == keysBefore, "a refused write changed the objects")
            if path != .primaryKey && path != .delete {
                #expect(["P.", "[0]", "line "].contains { e.message.contains($0) }, "unlocated: \(e.message)")
            }
            return
        }
        #expect(sample.expectation != .refused, "\(sample) via \(path) was accepted")
        let kept: Value?
        switch path {
        case .insert: kept = try object("P", "n", t)?["v"]
        case .set: kept = try object("P", "o", t)?["v"]
        case .listInsert, .wholeList:
            guard case .list(let l)? = try object("P", "o", t)?["l"] else { return }
            kept = l.first
        case .addPropertiesDefault:
            try apply(#"[{"type": "INSERT", "object_type": "P", "identity": "m", "values": {"id": "m"}}]"#, t)
            kept = try object("P", "m", t)?["d"]
        case .primaryKey:
            kept = try keys(t).subtracting(keysBefore).first
        case .delete:
            let gone = keysBefore.subtracting(try keys(t))
            #expect(gone.count <= 1, "a DELETE removed \(gone.count) objects")
            kept = gone.first
            if gone.isEmpty { return }
        }
        guard let kept else {
            Issue.record("\(sample) via \(path): nothing was stored")
            return
        }
        #expect(sample.means(kept), "\(sample) via \(path) was stored as \(kept)")
        if path == .insert || path == .set, let h = try lastHistoryValue(t) {
            #expect(h == kept || (h.isNaN && kept.isNaN), "store \(kept) and history \(h) disagree")
        }
    }

    /// Objects of `K` whose keys a careless DELETE could reach: a string key cut at its first
    /// NUL; an int written with a fraction, as the nearest double and as the integer it is.
    func seedNeighbours(of sample: ValueSample, _ t: TemporaryStore) throws {
        var near: Set<String> = []
        switch (sample.kind, sample.jsonValue) {
        case (.uuid, .string(let s)?):
            // The key a careless parser reads: the text before the NUL.
            let before = String(s.prefix { $0 != "\u{0}" })
            if UUID(uuidString: before) != nil { near = [JSONValue.string(before).serialized()] }
        case (.string, .string(let s)?):
            near = Set([String(s.prefix { $0 != "\u{0}" }), "a", "keep"].map { JSONValue.string($0).serialized() })
            if !s.contains("\u{0}") { near.insert(sample.json) }
        case (.int, _):
            let text = sample.json
            if Int64(text) != nil { near.insert(text) }
            if let d = Double(text), d.rounded() == d, abs(d) < 9.2e18 { near.insert(String(Int64(d))) }
            if let whole = text.split(separator: ".").first, text.hasSuffix(".0"), Int64(whole) != nil {
                near.insert(String(whole))
            }
        default: break
        }
        guard !near.isEmpty else { return }
        let inserts = near.map { k in
            #"{"type": "INSERT", "object_type": "K", "identity": \#(k), "values": {"id": \#(k)}}"#
        }
        try apply("[\(inserts.joined(separator: ","))]", t)
    }

    func apply(_ json: String, _ t: TemporaryStore) throws { try t.applyJSON(json, to: "/p") }

    func object(_ type: String, _ id: Value, _ t: TemporaryStore) throws -> PropertyValues? {
        try t.store.object(of: type, identity: id, in: "/p")?.values
    }

    func keys(_ t: TemporaryStore) throws -> Set<Value> {
        guard try t.store.contains("/p"), try t.store.schema(of: "/p")[type: "K"] != nil else { return [] }
        return Set(try t.store.objects(of: "K", in: "/p").compactMap { $0.values["id"] })
    }

    func lastHistoryValue(_ t: TemporaryStore) throws -> Value? {
        switch try t.store.history(of: "/p").last?.instructions.last {
        case .insert(_, _, let v)?, .set(_, _, let v)?: v["v"]
        default: nil
        }
    }
}

extension Value {
    var isNaN: Bool {
        switch self {
        case .double(let d): d.isNaN
        case .float(let f): f.isNaN
        default: false
        }
    }
}
