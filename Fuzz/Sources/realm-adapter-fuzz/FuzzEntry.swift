import Foundation
import FuzzTargets

// The main: built with `-sanitize=fuzzer -D FUZZING` (scripts/fuzz.sh) it hands over to
// libFuzzer's driver, which calls `fuzzOne` with each input; built plainly, it runs the files
// named on the command line through the target. The target comes from REALM_ADAPTER_FUZZ_TARGET.
let target = FuzzTargets.all[ProcessInfo.processInfo.environment["REALM_ADAPTER_FUZZ_TARGET"] ?? ""]

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target else {
        FileHandle.standardError.write(
            Data("set REALM_ADAPTER_FUZZ_TARGET to one of: \(FuzzTargets.all.keys.sorted())\n".utf8))
        exit(2)
    }
    target(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt
#endif

@main
struct FuzzMain {
    static func main() throws {
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
        #else
            for file in CommandLine.arguments.dropFirst() {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
                _ = bytes.withUnsafeBytes { fuzzOne($0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
            }
        #endif
    }
}
