/// Where each type's load found its Realms: empty of that type (objects are created) or not
/// (rows are merged, and objects the load did not write are removed at the end).
final class LoadRun {
    private var mode: [String: [String: Bool]] = [:]
    var written = Set<String>()
    /// The targets the load's link checks found in the Realm it writes (``KnownObjects``).
    let known = KnownObjects()
    /// The adapter cursors (ids) the load's own transactions move past as they commit: the
    /// daemon's, and its database-order cursor (see ``Loader/recordHandOff(_:)``).
    let passing: [Int64]

    init(passing: [Int64]) { self.passing = passing }

    /// Whether rows of `type` are merged into the Realm at `path`; decided at the first batch.
    func merges(_ type: String, _ path: String, _ hasObjects: () throws -> Bool) throws -> Bool {
        if let m = mode[type]?[path] { return m }
        let m = try hasObjects()
        mode[type, default: [:]][path] = m
        return m
    }

    func merged(_ type: String, _ path: String) -> Bool { mode[type]?[path] ?? true }
    func fresh(_ type: String, _ path: String) -> Bool { mode[type]?[path] == false }
}
