import ArgumentParser
import Foundation
import Logging
import RealmAdapter
import RealmServer

@main
struct RealmAdapterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-adapter",
        abstract: "Keep Realms and SQL databases in sync.",
        discussion: """
            realm-adapter seeds Realms from an existing database (`load`: Postgres, an app's SQLite \
            file, or SQL Server, so far run against Babelfish only), keeps them in \
            sync with it, both ways (`run`), writes a starting configuration from the database \
            (`init`), and lets you look into and write to the embedded Realm store (`realm`).

            Start with `realm-adapter init --database URL -o adapter.json`, check it with \
            `realm-adapter validate --config adapter.json`, seed with `realm-adapter load --config \
            adapter.json`, then `realm-adapter run --config adapter.json`. \
            Examples live in examples/ of the repository.
            """,
        version: "0.1.0",
        subcommands: [
            Init.self, Validate.self, Load.self, Run.self, Events.self, Serve.self, Status.self, DeadLetter.self,
            Teardown.self,
            RealmCommand.self, StoreCommand.self, UserCommand.self, PermissionCommand.self, RoleCommand.self,
        ]
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

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Log format: text, or json (one object per line, the metadata as fields, for log shippers; "
                + "default: the config's logFormat, else text).",
            valueName: "format"))
    var logFormat: String?

    func validate() throws {
        if let logFormat, LogFormat(rawValue: logFormat) == nil {
            throw ValidationError("Unknown log format '\(logFormat)'. Use text or json.")
        }
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
        LoggingBootstrap.run(file: file, format: logFormat.flatMap(LogFormat.init) ?? config?.logFormat ?? .text)
        var logger = Logger(label: "realm-adapter")
        logger.logLevel = level
        return logger
    }
}

enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false

    /// The format chosen, for the final error's line (``reportingErrors(_:)``).
    nonisolated(unsafe) private(set) static var format = LogFormat.text

    /// The format of an error that comes before logging is set up (a configuration that does
    /// not parse): the flag's, when given.
    static func early(_ format: LogFormat?) {
        if !done, let format { self.format = format }
    }

    static func run(file: String?, format: LogFormat) {
        guard !done else { return }
        done = true
        self.format = format
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
        let standardError = LineSink(FileHandle.standardError)
        let logFile = fileHandle.map(LineSink.init)
        LoggingSystem.bootstrap { label in
            var handlers: [LogHandler] =
                switch format {
                case .text: [StreamLogHandler.standardError(label: label)]
                case .json: [LineLogHandler(label: label, sink: standardError, format: .json)]
                }
            if let logFile { handlers.append(LineLogHandler(label: label, sink: logFile, format: format)) }
            // Studio's Logs page (`serve`): the recent lines, in memory.
            handlers.append(RecentLogs.shared.handler(label: label))
            return MultiplexLogHandler(handlers)
        }
    }
}

/// Runs a command body, turning library errors into a message on standard error and exit code 1.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let e as RealmAdapterError {
        reportError(e.message)
        throw ExitCode.failure
    } catch let e as any ConnectorError {
        reportError(e.description)
        throw ExitCode.failure
    } catch let e as MetricsServer.MetricsServerError {
        reportError(e.description)
        throw ExitCode.failure
    } catch let e as StoreError {
        reportError("The Realm store failed: \(e.message).")
        throw ExitCode.failure
    }
}

/// `error: …` on standard error; with `--log-format json`, one JSON object like the log lines.
func reportError(_ message: String) {
    let line =
        switch LoggingBootstrap.format {
        case .text: "error: \(message)"
        case .json:
            JSONValue.object(LineLogHandler.fields(level: .error, label: "realm-adapter", message: message))
                .serialized()
        }
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
