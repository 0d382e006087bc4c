// Writes N transactions to a Realm from a separate process, for the multi-process tests.
// Usage: store-writer STORE_DIR REALM_PATH NAME COUNT
import Foundation
import RealmAdapter

let args = CommandLine.arguments
guard args.count == 5, let count = Int(args[4]) else {
    FileHandle.standardError.write(Data("usage: store-writer STORE_DIR REALM_PATH NAME COUNT\n".utf8))
    exit(2)
}
let (directory, path, name) = (args[1], args[2], args[3])
do {
    let store = try RealmStore(directory: directory)
    for i in 0..<count {
        try store.apply(
            [
                .insert(
                    objectType: "Person", identity: .string("\(name)-\(i)"),
                    values: ["id": .string("\(name)-\(i)"), "name": .string(name)])
            ],
            to: path, origin: name)
    }
} catch {
    FileHandle.standardError.write(Data("store-writer \(name): \(error)\n".utf8))
    exit(1)
}
