/// Realm paths: `/SQLDemo`, `/u1/tasks`.
public enum RealmPath {
    /// Checks that `path` is absolute, has no empty, `.` or `..` segments, and no control
    /// characters or backslashes; throws `invalidPath` saying what is wrong otherwise.
    public static func validate(_ path: String) throws {
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
}
