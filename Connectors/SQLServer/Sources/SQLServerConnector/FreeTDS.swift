import CFreeTDS
import Foundation

/// db-lib's process-wide state, set once: its initialisation, the error and message handlers,
/// and the configuration file that carries each server's TLS settings and timeouts.
///
/// db-lib is not thread-safe per connection: a `DBPROCESS` is used by one thread at a time
/// (each ``SQLServerConnection`` runs every call on its own serial queue, off the cooperative
/// pool). Its handlers are process-wide C functions called synchronously on the thread of the
/// call that failed, so each call collects what they report in a sink kept in that thread's
/// dictionary (``collecting(_:)``), which also works during a login, before any `DBPROCESS`.
enum FreeTDS {
    /// Guards the configuration file.
    private static let lock = NSLock()
    /// The sections written to the configuration file (under `lock`).
    nonisolated(unsafe) private static var written: Set<String> = []
    private static let sinkKey = "realm-adapter.freetds.diagnostics"

    /// Initialises db-lib and installs the handlers (once per process).
    static let initialized: Void = {
        dbinit()
        _ = dberrhandle(errorHandler)
        _ = dbmsghandle(messageHandler)
        // Set once: db-lib reads the file again at every login, and setting it frees the path
        // that logins under way may be reading (it keeps a copy).
        let path = strdup(configurationFile)
        dbsetifile(path)
        free(path)
    }()

    /// The configuration file: one section per server this process reached, with no credentials,
    /// in a directory of this process's own (mode 0700, made by `mkdtemp`, so no other user can
    /// plant a file there), removed when the process exits.
    static let configurationFile: String = {
        let base = (NSTemporaryDirectory() as NSString).appendingPathComponent("realm-adapter-freetds-XXXXXX")
        var template = Array(base.utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        precondition(made, "cannot create a private directory in \(NSTemporaryDirectory()) for FreeTDS")
        let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        createdDirectory = dir
        atexit {
            guard let dir = FreeTDS.createdDirectory else { return }
            try? FileManager.default.removeItem(atPath: dir)
        }
        return dir + "/freetds.conf"
    }()

    /// The directory of ``configurationFile``, once made (for its removal at exit).
    nonisolated(unsafe) private static var createdDirectory: String?

    /// Logs in to `settings`' server; the caller then owns the `DBPROCESS`.
    static func login(_ settings: SQLServerSettings) throws -> OpaquePointer {
        _ = initialized
        guard let login = dblogin() else { throw SQLServerError.cannotConnect(settings.displayTarget, Diagnostics()) }
        defer { dbloginfree(login) }
        _ = dbsetlname(login, settings.user ?? "", Int32(DBSETUSER))
        _ = dbsetlname(login, settings.password?.value ?? "", Int32(DBSETPWD))
        _ = dbsetlname(login, settings.applicationName, Int32(DBSETAPP))
        _ = dbsetlname(login, "UTF-8", Int32(DBSETCHARSET))
        if let database = settings.database { _ = dbsetlname(login, database, Int32(DBSETDBNAME)) }
        _ = dbsetlversion(login, BYTE(DBVERSION_74))
        return try collecting { () throws -> OpaquePointer? in
            let name = settings.freetdsSectionName
            // The timeouts are in the server's section, so each login has its own: db-lib's
            // process-wide ones (`dbsetlogintime`, `dbsettime`) would be shared by logins side by
            // side and changed under open connections.
            try lock.withLock {
                guard !written.contains(name) else { return }
                try append("[\(name)]\n\(settings.freetdsSection)\n")
                written.insert(name)
            }
            return tdsdbopen(login, name, 1)
        } failure: { diagnostics in
            // db-lib names the server by its configuration section: name it as the user does.
            var named = diagnostics
            for i in named.errors.indices {
                named.errors[i].text = named.errors[i].text.replacingOccurrences(
                    of: " (\(settings.freetdsSectionName))", with: "")
            }
            return SQLServerError.cannotConnect(settings.displayTarget, named, hints: settings.loginHints)
        }
    }

    private static func append(_ section: String) throws {
        let url = URL(fileURLWithPath: configurationFile)
        if !FileManager.default.fileExists(atPath: configurationFile) {
            let fd = open(configurationFile, O_CREAT | O_EXCL | O_WRONLY, 0o600)
            guard fd >= 0 else {
                throw SQLServerError.invalidSetting("(FreeTDS)", "cannot create \(configurationFile)")
            }
            close(fd)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(section.utf8))
    }

    /// Runs `body` with a fresh sink for the handlers; a nil result or a reported error (a
    /// server message of severity 11 or more, a db-lib error) becomes `failure`'s error.
    static func collecting<T>(
        _ body: () throws -> T?, failure: (Diagnostics) -> SQLServerError
    ) throws -> T {
        let sink = Sink()
        let thread = Thread.current.threadDictionary
        thread[sinkKey] = sink
        defer { thread.removeObject(forKey: sinkKey) }
        let result = try body()
        guard let result, sink.diagnostics.isEmpty else { throw failure(sink.diagnostics) }
        return result
    }

    final class Sink: NSObject {
        var diagnostics = Diagnostics()
    }

    private static var currentSink: Sink? { Thread.current.threadDictionary[sinkKey] as? Sink }

    /// db-lib's errors. Returning `INT_EXIT` would end the process, so it is never returned.
    private static let errorHandler: EHANDLEFUNC = { _, severity, number, osError, text, _ in
        currentSink?.diagnostics.errors.append(
            SQLServerError.LibraryError(
                number: Int(number), severity: Int(severity), osError: osError > 0 ? Int(osError) : nil,
                text: text.map { String(cString: $0) } ?? "db-lib error \(number)"))
        return INT_CANCEL
    }

    /// The server's messages; severity 10 and less are informational ("Changed database context").
    private static let messageHandler: MHANDLEFUNC = { _, number, state, severity, text, _, procedure, line in
        guard severity > 10 else { return 0 }
        currentSink?.diagnostics.messages.append(
            SQLServerError.ServerMessage(
                number: Int(number), severity: Int(severity), state: Int(state), line: Int(line),
                procedure: procedure.flatMap { $0.pointee == 0 ? nil : String(cString: $0) },
                text: text.map { String(cString: $0) } ?? ""))
        return 0
    }
}
