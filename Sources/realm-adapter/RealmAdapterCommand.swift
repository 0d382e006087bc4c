import ArgumentParser
import Foundation
import Logging
import RealmAdapter

@main
struct RealmAdapterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-adapter",
        abstract: "Keep Realms and SQL databases in sync.",
        discussion: """
            realm-adapter seeds Realms from an existing database (`load`: Postgres, an app's SQLite \
            file, or SQL Server, which has not yet run against a server), keeps them in \
            sync with it, both ways (`run`), writes a starting configuration from the database \
            (`init`), and lets you look into and write to the embedded Realm store (`realm`).

            Start with `realm-adapter init --database URL -o adapter.json`, check it with \
            `realm-adapter validate --config adapter.json`, seed with `realm-adapter load --config \
            adapter.json`, then `realm-adapter run --config adapter.json`. \
            Examples live in examples/ of the repository.
            """,
        version: "0.1.0",
        subcommands: [Init.self, Validate.self, Load.self, Run.self, Status.self, DeadLetter.self, RealmCommand.self]
    )
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Log level: trace, debug, info, notice, warning, error, critical (default: the config's "
                + "logLevel, else info).",
            valueName: "level"))
    var logLevel: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Also write logs to this file (default: the config's logFile).", valueName: "file"))
    var logFile: String?

    func validate() throws {
        if let logLevel, Configuration.logLevel(logLevel) == nil {
            throw ValidationError(
                "Unknown log level '\(logLevel)'. Use trace, debug, info, notice, warning, error or critical.")
        }
    }

    /// Sets up swift-log once and returns the CLI's logger. Logs go to standard error, so
    /// standard output stays clean for data (JSON dumps, history).
    func bootstrap(config: Configuration? = nil) -> Logger {
        let level = logLevel.flatMap(Configuration.logLevel) ?? config?.logLevel ?? .info
        let file = logFile ?? config?.logFile
        LoggingBootstrap.run(file: file)
        var logger = Logger(label: "realm-adapter")
        logger.logLevel = level
        return logger
    }
}

enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false

    static func run(file: String?) {
        guard !done else { return }
        done = true
        let fileHandle = file.flatMap { path -> FileHandle? in
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
            }
            guard let h = FileHandle(forWritingAtPath: path) else {
                FileHandle.standardError.write(
                    Data("warning: cannot open the log file \(path); logging to standard error only\n".utf8))
                return nil
            }
            h.seekToEndOfFile()
            return h
        }
        LoggingSystem.bootstrap { label in
            var handlers: [LogHandler] = [StreamLogHandler.standardError(label: label)]
            if let fileHandle { handlers.append(FileLogHandler(label: label, handle: fileHandle)) }
            return handlers.count == 1 ? handlers[0] : MultiplexLogHandler(handlers)
        }
    }
}

/// Runs a command body, turning library errors into a message on standard error and exit code 1.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let e as RealmAdapterError {
        FileHandle.standardError.write(Data("error: \(e.message)\n".utf8))
        throw ExitCode.failure
    } catch let e as any ConnectorError {
        FileHandle.standardError.write(Data("error: \(e.description)\n".utf8))
        throw ExitCode.failure
    }
}
