import Foundation

/// Realm paths: `/SQLDemo`, `/u1/tasks`.
public enum RealmPath {
    /// Checks that `path` is absolute, has no empty, `.` or `..` segments, no control
    /// characters or backslashes, and is in Unicode normalization form C; throws `invalidPath`
    /// saying what is wrong otherwise.
    ///
    /// One pass over the bytes, as the store and path templates see a path (every commit checks
    /// each of its paths). Control characters, DEL and the backslash are ASCII, so no byte of a
    /// longer UTF-8 sequence is one of them.
    public static func validate(_ path: String) throws {
        if let why = problem(path) { throw RealmAdapterError.invalidPath(path, why) }
    }

    /// What makes `path` no valid Realm path (``validate(_:)``), in words that do not repeat it;
    /// nil for a valid path.
    static func problem(_ path: String) -> String? {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { return "it must start with '/'" }
        guard bytes.count <= 1024 else { return "it is longer than 1024 bytes" }
        var (length, dots, control) = (0, 0, false)  // the current segment's length, its dots while only dots
        var ascii = true
        func segmentProblem() -> String? {
            if length == 0 { return "it has an empty segment ('//' or a trailing '/')" }
            if dots == length, dots <= 2 { return "'\(String(repeating: ".", count: dots))' segments are not allowed" }
            (length, dots) = (0, 0)
            return nil
        }
        for b in bytes.dropFirst() {
            if b == UInt8(ascii: "/") {
                if let why = segmentProblem() { return why }
                continue
            }
            if b < 0x20 || b == 0x7F || b == UInt8(ascii: "\\") { control = true }
            if b >= 0x80 { ascii = false }
            if b == UInt8(ascii: "."), dots == length { dots += 1 }
            length += 1
        }
        if let why = segmentProblem() { return why }
        if control { return "it contains a control character or a backslash" }
        if !ascii, !isNFC(path) {
            return "it is not in Unicode normalization form C (NFC): text that looks the same, such as \"café\" "
                + "written with a separate accent, would name another Realm"
        }
        return nil
    }

    /// Whether `text` is in Unicode normalization form C. The store compares paths byte by
    /// byte, Swift's `String` by canonical equivalence; among texts in NFC the two agree, so
    /// paths that are not would let two Realms pass for one (in a dictionary of Realms by path,
    /// or a grant by path).
    static func isNFC(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 } || text.precomposedStringWithCanonicalMapping.utf8.elementsEqual(text.utf8)
    }
}
