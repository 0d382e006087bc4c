import CouponVerifier
import Foundation
import Logging
import RealmAdapter
import ServiceLifecycle

// coupon-verifier --store DIR [--path-regex R] [--valid CODE,CODE] [--delay-ms N] [--stall-at VERSION]
// Checks the coupons of every Realm the path regex matches (default: all) and writes the
// verdict back; prints `event <path> <version> <checked>` per event it handled. Stops on
// SIGINT or SIGTERM after the event at hand. `--delay-ms` slows each event, and `--stall-at`
// stops in the middle of one event for an hour (for the kill tests).
var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard name.hasPrefix("--"), let value = arguments.popFirst() else {
        FileHandle.standardError.write(Data("usage: coupon-verifier --store DIR [--path-regex R] [--valid A,B]\n".utf8))
        exit(64)
    }
    options[String(name.dropFirst(2))] = value
}
guard let directory = options["store"] else {
    FileHandle.standardError.write(Data("coupon-verifier: --store DIR is required\n".utf8))
    exit(64)
}
let delay = Int(options["delay-ms"] ?? "0") ?? 0
let stallAt = Int64(options["stall-at"] ?? "")
let logger = Logger(label: "coupon-verifier")
let store = try RealmStore(directory: directory)
let handler = try CouponVerifier.handler(
    store: store, pathRegex: options["path-regex"] ?? "^/",
    valid: Set((options["valid"] ?? "").split(separator: ",").map(String.init)),
    logger: logger
) { event, checked in
    if delay > 0 { usleep(UInt32(delay * 1000)) }  // before the line: a kill lands mid-event
    if event.version == stallAt { sleep(3600) }
    FileHandle.standardOutput.write(Data("event \(event.path) \(event.version) \(checked)\n".utf8))
}
let group = ServiceGroup(
    configuration: .init(
        services: [.init(service: handler)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
try await group.run()
