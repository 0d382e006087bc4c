// jsonl-mirror: follow a Realm store and mirror its Realms into JSON-lines files.
//
//   jsonl-mirror STORE_DIR OUTPUT_DIR [PATH_REGEX] [--once]
//
// Without --once it runs until SIGINT/SIGTERM, as a Service in a ServiceGroup.
import Foundation
import JSONLinesMirror
import Logging
import RealmAdapter
import ServiceLifecycle

var args = Array(CommandLine.arguments.dropFirst())
let once = args.contains("--once")
args.removeAll { $0 == "--once" }
guard args.count == 2 || args.count == 3 else {
    FileHandle.standardError.write(Data("usage: jsonl-mirror STORE_DIR OUTPUT_DIR [PATH_REGEX] [--once]\n".utf8))
    exit(2)
}
LoggingSystem.bootstrap(StreamLogHandler.standardError)
let logger = Logger(label: "jsonl-mirror")
do {
    let store = try RealmStore(directory: args[0], logger: logger)
    let adapter = try Adapter(
        store: store, name: "jsonl-mirror", pathRegex: args.count == 3 ? args[2] : ".*", logger: logger)
    let mirror = JSONLinesMirror(adapter: adapter, outputDirectory: args[1], logger: logger)
    if once {
        let n = try mirror.drainAll()
        print("Mirrored \(n) transaction\(n == 1 ? "" : "s") into \(args[1])")
    } else {
        let group = ServiceGroup(
            configuration: .init(services: [mirror], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
