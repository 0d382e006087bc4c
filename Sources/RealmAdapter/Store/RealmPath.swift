import Foundation

/// Realm paths: `/SQLDemo`, `/u1/tasks`.
public enum RealmPath {
    /// Checks that `path` is absolute, has no empty, `.` or `..` segments, and no control
    /// characters or backslashes; throws `invalidPath` saying what is wrong otherwise.
    public static func validate(_ path: String) throws {
        if isPlainlyValid(path) { return }
        func fail(_ why: String) -> RealmAdapterError { RealmAdapterError.invalidPath(path, why) }
        guard path.hasPrefix("/") else { throw fail("it must start with '/'") }
        guard path.utf8.count <= 1024 else { throw fail("it is longer than 1024 bytes") }
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for s in segments {
            if s.isEmpty { throw fail("it has an empty segment ('//' or a trailing '/')") }
            if s == "." || s == ".." { throw fail("'\(s)' segments are not allowed") }
        }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "\\" }) {
            throw fail("it contains a control character or a backslash")
        }
    }

    /// One pass over the bytes for the common case (every write checks each of its paths); a
    /// path it doubts is checked again above, which names what is wrong. Control characters,
    /// DEL and the backslash are ASCII, so no byte of a longer UTF-8 sequence is one of them.
    private static func isPlainlyValid(_ path: String) -> Bool {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/"), bytes.count <= 1024 else { return false }
        var segment = 0  // bytes in the current segment
        var dots = 0  // of which dots, while only dots
        for b in bytes.dropFirst() {
            if b == UInt8(ascii: "/") {
                guard segment > 0, !(dots == segment && dots <= 2) else { return false }
                (segment, dots) = (0, 0)
                continue
            }
            guard b >= 0x20, b != 0x7F, b != UInt8(ascii: "\\") else { return false }
            if b == UInt8(ascii: "."), dots == segment { dots += 1 }
            segment += 1
        }
        return segment > 0 && !(dots == segment && dots <= 2)
    }

    /// Whether `a` sorts before `b` byte by byte, as the store lists paths (SQLite's BINARY
    /// collation), without comparing them as Unicode.
    static func precedes(_ a: String, _ b: String) -> Bool {
        var (a, b) = (a, b)
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let n = min(x.count, y.count)
                let c = n == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, n)
                return c != 0 ? c < 0 : x.count < y.count
            }
        }
    }
}
