import Foundation
import GRDB
import PropertyBased
import RealmAdapter
import TestSupport
import Testing

@testable import PostgresConnector
@testable import PostgresStore
@testable import RealmAdapter

extension PostgresIntegration {
    /// The Postgres store's key codec against both real engines: keys of every kind (integers to
    /// the extremes, text in any script, with NULs of no kind, blobs, prefixes of each other)
    /// sort the same in Postgres, as encoded `bytea`, as in SQLite, as they are; and decode to
    /// themselves.
    @Suite struct PostgresKeyCodecTests {
        @Test func keysSortInPostgresAsInSQLiteAndComeBack() async throws {
            let pg = try await PostgresConnection.connect(TestServer.settings)
            defer { pg.close() }
            let sqlite = try DatabaseQueue()
            try await sqlite.write { db in try db.execute(sql: "CREATE TABLE k (i INTEGER, v)") }
            await propertyCheck(count: 40, input: Gen.int64(in: 0...Int64.max)) { seed in
                var rng = SeededGenerator(seed: UInt64(seed))
                let keys = (0..<60).map { _ in Self.key(&rng) }
                do {
                    for k in keys { #expect(try PostgresKeyCodec.decode(try PostgresKeyCodec.encode(k)!) == k) }
                    let inSQLite = try sqlite.write { db in
                        try db.execute(sql: "DELETE FROM k")
                        for (i, k) in keys.enumerated() {
                            try db.execute(sql: "INSERT INTO k VALUES (?, ?)", arguments: [i, k.databaseValue])
                        }
                        return try Int.fetchAll(db, sql: "SELECT i FROM k ORDER BY v, i")
                    }
                    let rows = keys.indices.map { "($\(2 * $0 + 1)::int, $\(2 * $0 + 2)::bytea)" }
                    let parameters = try keys.enumerated().flatMap { i, k -> [PostgresParameter?] in
                        [.text(String(i)), .binary(try PostgresKeyCodec.encode(k)!)]
                    }
                    let sql = "SELECT i FROM (VALUES \(rows.joined(separator: ", "))) AS k(i, v) ORDER BY v, i"
                    let inPostgres = try pg.sessionSync { s in try s.query(sql, parameters: parameters) }.rows
                        .map { Int($0[0]!)! }
                    #expect(inPostgres == inSQLite, "keys \(keys)")
                } catch {
                    Issue.record("\(error)")
                }
            }
        }

        @Test func bytesThatAreNoKeyAreRefused() throws {
            for bad in [Data(), Data([9, 1]), Data([1, 0, 0])] {
                #expect(throws: StoreError.self) { try PostgresKeyCodec.decode(bad) }
            }
            #expect(throws: StoreError.self) { try PostgresKeyCodec.encode(.real(0.5)) }
            #expect(try PostgresKeyCodec.encode(.real(-3)) == PostgresKeyCodec.encode(.integer(-3)))
            #expect(try PostgresKeyCodec.encode(.null) == nil)
        }

        /// A key of any kind, with the values where orders go wrong over-represented.
        static func key(_ rng: inout SeededGenerator) -> StoredValue {
            let edges: [Int64] = [.min, .min + 1, -256, -1, 0, 1, 255, 256, .max - 1, .max]
            let pieces = ["", "a", "ab", "b", "\u{7F}", "é", "ü", "日本", "😀", "A", "Z", "a\u{1}", " "]
            switch rng.next() % 6 {
            case 0: return .integer(edges[Int(rng.next() % UInt64(edges.count))])
            case 1: return .integer(Int64(bitPattern: rng.next()))
            case 2, 3:
                let n = Int(rng.next() % 4)
                return .text((0..<n).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined())
            default:
                let n = Int(rng.next() % 5)
                let bytes: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF]
                return .blob(Data((0..<n).map { _ in bytes[Int(rng.next() % UInt64(bytes.count))] }))
            }
        }
    }
}
