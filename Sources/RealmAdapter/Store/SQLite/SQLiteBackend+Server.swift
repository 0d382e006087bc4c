import Foundation
import GRDB
import Logging

extension RealmStore {
    /// The server's own database beside the store in `directory` (`server.sqlite`: users,
    /// tokens, path permissions), created if missing and readable by its owner only.
    ///
    /// - Parameter create: makes or brings up to date its tables, in one write transaction that
    ///   no other process runs at the same time.
    package static func serverDatabase(in directory: String, create: (any StoreConnection) throws -> Void) throws
        -> any StoreBackend
    {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var config = GRDB.Configuration()
        config.busyMode = .timeout(10)
        let file = (directory as NSString).appendingPathComponent("server.sqlite")
        let backend: SQLiteBackend
        do {
            let queue = try DatabaseQueue(path: file, configuration: config)
            backend = SQLiteBackend(
                pool: queue, path: file, durable: true, logger: Logger(label: "realm-adapter.server-database"))
        } catch let e as DatabaseError {
            throw StoreError(e)
        }
        // The password hashes are for this user's eyes only.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        try backend.write(.asOpened, create)
        return backend
    }
}
