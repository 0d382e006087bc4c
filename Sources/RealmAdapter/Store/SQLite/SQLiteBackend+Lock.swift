import Foundation

extension SQLiteBackend {
    /// An exclusive lock on the file `name.lock` beside the database, released by the system
    /// when the process ends.
    func exclusiveLock(_ name: String) throws -> (any StoreLock)? {
        try FileLock.take((path as NSString).deletingLastPathComponent + "/\(name).lock")
    }
}

/// A held `flock`, released when the value goes away.
private final class FileLock: StoreLock {
    private let descriptor: Int32
    private init(descriptor: Int32) { self.descriptor = descriptor }
    deinit { close(descriptor) }

    /// The lock on `file` (made if missing), or nil when another process holds it.
    static func take(_ file: String) throws -> FileLock? {
        let fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RealmAdapterError.daemonLockUnavailable(file, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return FileLock(descriptor: fd)
    }
}
