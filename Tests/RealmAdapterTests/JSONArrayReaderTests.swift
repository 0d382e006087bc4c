import Foundation
import Testing

@testable import RealmAdapter

/// `realm apply` streams its file: elements are found one at a time, across the reader's 1 MiB
/// chunks, with brackets and quotes inside strings, and errors name the element.
@Suite struct JSONArrayReaderTests {
    func read(_ text: String) throws -> [JSONValue] {
        let file = NSTemporaryDirectory() + "array-\(UUID().uuidString.prefix(8)).json"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        var reader = JSONArrayReader(FileHandle(forReadingAtPath: file)!)
        var out: [JSONValue] = []
        while let v = try reader.next() { out.append(v) }
        return out
    }

    @Test func elementsAreReadWhateverTheyHold() throws {
        let tricky = #"{"s": "a],[}{\"\\", "n": [1, [2, {"x": "]"}]]}"#
        #expect(try read("[\(tricky), 2 ,\"x\"]\n") == [try JSONValue(parsing: tricky), .int(2), .string("x")])
        #expect(try read(" [ ] ") == [])
        #expect(try read(#"{"one": 1}"#) == [try JSONValue(parsing: #"{"one": 1}"#)])
        #expect(try read("\u{FEFF}[1]") == [.int(1)])
    }

    /// Elements larger than a chunk, and elements straddling chunk boundaries, come whole.
    @Test func elementsCrossChunks() throws {
        let big = String(repeating: "é]\\\"", count: 400_000)
        let items = (0..<5).map { i in JSONValue.object([.init("i", .int(Int64(i))), .init("s", .string(big))]) }
        let text = "[" + items.map { $0.serialized() }.joined(separator: ",") + "]"
        #expect(try read(text) == items)
    }

    @Test(arguments: [
        ("[1, 2", "[2]", "not closed"), ("[1 2]", "[0]", "unexpected text"), ("[1, {\"a\": }]", "[1]", "line 1"),
        ("[1] x", "$", "after the array"), ("", "$", "found nothing"), ("nope", "$", "expected an array"),
        ("[1,]", "[1]", "expected a value"),
    ])
    func errorsNameTheElement(text: String, place: String, says: String) {
        #expect {
            _ = try read(text)
        } throws: { error in
            let m = (error as? RealmAdapterError)?.message ?? ""
            return m.contains(place) && m.contains(says)
        }
    }
}
