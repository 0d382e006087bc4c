import Foundation

/// The elements of a JSON array read from a file one at a time, so that a document of any size
/// costs memory for one element, not for the document (`realm apply` of a 200 MB instruction
/// file held the file, its parse tree and its instructions at once: 1.8 GB).
///
/// It finds where each element ends (outside strings, at depth 0) and parses the element alone
/// with `JSONValue(parsing:errorCode:)`. A document that is one object, not an array, is
/// read as an array of that one element. Errors name the element (`[12]`) and, for JSON that
/// does not parse, the line and column within it.
public struct JSONArrayReader {
    private let handle: FileHandle
    private let code: RealmAdapterError.Code
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    private var started = false
    private var single = false
    private var finished = false
    /// The index of the next element.
    public private(set) var index = 0

    public init(_ handle: FileHandle, errorCode: RealmAdapterError.Code = .invalidInstruction) {
        self.handle = handle
        self.code = errorCode
    }

    /// The next element, or nil after the last one.
    public mutating func next() throws -> JSONValue? {
        if finished { return nil }
        if !started { try start() }
        guard let bytes = try nextElement() else {
            finished = true
            return nil
        }
        defer { index += 1 }
        do {
            return try JSONValue(parsing: Data(bytes), errorCode: code)
        } catch let e as RealmAdapterError {
            throw RealmAdapterError.atJSONPath("[\(index)]", e.message, code: code)
        }
    }

    private func error(_ message: String) -> RealmAdapterError {
        RealmAdapterError.atJSONPath("[\(index)]", message, code: code)
    }

    /// Skips a byte order mark and space, and reads `[` (or notes a single object).
    private mutating func start() throws {
        started = true
        if try peek(3) == [0xEF, 0xBB, 0xBF] { position += 3 }
        try skipSpace()
        switch try peek(1).first {
        case UInt8(ascii: "[")?:
            position += 1
        case UInt8(ascii: "{")?:
            single = true
        case nil:
            throw RealmAdapterError.atJSONPath("$", "expected an array of instructions, found nothing.", code: code)
        default:
            throw RealmAdapterError.atJSONPath("$", "expected an array of instructions (or one object).", code: code)
        }
    }

    /// The bytes of the next element, or nil at the array's end.
    private mutating func nextElement() throws -> [UInt8]? {
        try skipSpace()
        if !single {
            if index > 0 {
                guard let c = try peek(1).first else { throw error("the array is not closed (no ']').") }
                if c == UInt8(ascii: "]") { return try end() }
                guard c == UInt8(ascii: ",") else { throw error("expected ',' or ']' after element \(index - 1).") }
                position += 1
                try skipSpace()
            } else if try peek(1).first == UInt8(ascii: "]") {
                return try end()
            }
        } else if index > 0 {
            try skipSpace()
            guard try peek(1).isEmpty else { throw error("unexpected text after the JSON object.") }
            return nil
        }
        // The element starts at `position`, which stays there while it is scanned: a read of
        // more of the file drops the bytes before it, and the scan's place moves with them.
        var depth = 0
        var inString = false
        var escaped = false
        var i = position
        while true {
            if i == buffer.count {
                let dropped = position
                guard try fill() else { break }
                i -= dropped
                continue
            }
            let c = buffer[i]
            if inString {
                if escaped {
                    escaped = false
                } else if c == UInt8(ascii: "\\") {
                    escaped = true
                } else if c == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if c == UInt8(ascii: "\"") {
                inString = true
            } else if c == UInt8(ascii: "[") || c == UInt8(ascii: "{") {
                depth += 1
            } else if c == UInt8(ascii: "]") || c == UInt8(ascii: "}") {
                if depth == 0 { break }
                depth -= 1
            } else if c == UInt8(ascii: ","), depth == 0 {
                break
            }
            i += 1
        }
        guard i > position else { throw error("expected a value.") }
        defer { position = i }
        return Array(buffer[position..<i])
    }

    /// After `]`: only space may follow.
    private mutating func end() throws -> [UInt8]? {
        position += 1
        try skipSpace()
        guard try peek(1).isEmpty else {
            throw RealmAdapterError.atJSONPath("$", "unexpected text after the array.", code: code)
        }
        return nil
    }

    private mutating func skipSpace() throws {
        while let c = try peek(1).first, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { position += 1 }
    }

    /// Up to `n` bytes at the current position, reading more of the file as needed.
    private mutating func peek(_ n: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - position < n, try fill() {}
        return buffer[position..<min(buffer.count, position + n)]
    }

    /// Reads the next chunk of the file, dropping what was consumed; false at its end.
    private mutating func fill() throws -> Bool {
        if atEnd { return false }
        let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
        if chunk.isEmpty {
            atEnd = true
            return false
        }
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: chunk)
        return true
    }
}
