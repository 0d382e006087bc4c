import CLibPQ
import Foundation

/// A statement's parameter as libpq sends it.
public enum PostgresParameter: Sendable, Hashable {
    /// Text, read by Postgres as a literal of the parameter's type.
    case text(String)
    /// Bytes in the type's binary format (for `bytea`, the bytes themselves): what text cannot
    /// carry (a NUL byte), at half the size of `bytea`'s hex text.
    case binary(Data)
}

extension PostgresSession {
    /// Runs one statement with parameters in text or binary (`$1`, `$2`, …; `nil` is SQL NULL)
    /// and returns its rows as text.
    ///
    /// - Parameter types: the parameters' type OIDs (0: as the statement uses it), or nil to
    ///   let the statement type them all.
    @discardableResult
    public func query(_ sql: String, parameters: [PostgresParameter?], types: [UInt32]? = nil) throws
        -> PostgresResult
    {
        try withParameters(parameters) { count, values, lengths, formats in
            try PostgresResult(
                PQexecParams(handle, sql, count, types, values, lengths, formats, 0), connection: handle, sql: sql)
        }
    }

    /// Calls `body` with libpq's arrays of `parameters`: their count, values, lengths and formats
    /// (0 text, 1 binary), valid during the call.
    func withParameters<T>(
        _ parameters: [PostgresParameter?],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws -> T
    ) throws -> T {
        var copies: [UnsafeMutableRawPointer?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { for c in copies { free(c) } }
        for p in parameters {
            switch p {
            case nil:
                copies.append(nil)
                lengths.append(0)
                formats.append(0)
            case .text(let s):
                copies.append(UnsafeMutableRawPointer(strdup(s)))
                lengths.append(0)
                formats.append(0)
            case .binary(let d):
                // malloc(0) may return nil, which libpq would read as NULL: one byte at least.
                let copy = malloc(max(d.count, 1))!
                d.withUnsafeBytes { b in if let base = b.baseAddress { copy.copyMemory(from: base, byteCount: b.count) }
                }
                copies.append(copy)
                lengths.append(Int32(d.count))
                formats.append(1)
            }
        }
        let values = copies.map { $0.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) } }
        return try values.withUnsafeBufferPointer { v in
            try lengths.withUnsafeBufferPointer { l in
                try formats.withUnsafeBufferPointer { f in
                    try body(Int32(parameters.count), v.baseAddress, l.baseAddress, f.baseAddress)
                }
            }
        }
    }
}
