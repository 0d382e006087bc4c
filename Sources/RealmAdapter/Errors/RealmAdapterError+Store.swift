import Foundation

/// Errors of the store: its files, its Realms, its history, and rejected transactions.
extension RealmAdapterError {
    /// The store's directory could not be created.
    static func storeDirectory(_ directory: String, _ error: any Error) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable,
            "Cannot create the store directory '\(directory)': \(error.localizedDescription). "
                + "Check the path and its permissions.",
            context: ["store": directory], underlying: error)
    }

    /// The store's database file could not be opened or migrated.
    static func storeOpen(_ file: String, directory: String, _ e: StoreError) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable, "Cannot open the Realm store at '\(file)': \(e.message).",
            context: ["store": directory, "store.code": e.code], underlying: e)
    }

    /// SQLite failed under the store.
    static func storeFailed(_ e: StoreError) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable, "The Realm store failed: \(e.message).", context: ["store.code": e.code], underlying: e)
    }

    /// A Realm the store does not have.
    public static func realmNotFound(_ path: String) -> RealmAdapterError {
        RealmAdapterError(
            .realmNotFound,
            "There is no Realm at \(path) in this store. `realm-adapter realm list` shows the Realms it has.",
            context: ["realm.path": path])
    }

    /// A Realm refers to a schema the store does not hold.
    static func storedSchemaMissing(_ id: Int64, directory: String) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable, "The Realm store names a schema it does not hold (\(id)).",
            context: ["store": directory, "schema.id": "\(id)"])
    }

    /// The store has no table for a type a Realm's schema has.
    static func storeLayoutMissing(type: String) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable,
            "The store has no table for type \(type) although a Realm's schema has it: the store is damaged.",
            context: ["type": type])
    }

    /// The store has no column for a property a Realm's schema has.
    static func storeColumnMissing(type: String, property: String) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable,
            "The store has no column for \(type).\(property) although a Realm's schema has it: the store is damaged.",
            context: ["type": type, "property": property])
    }

    /// History asked for from before what compaction kept.
    static func historyCompacted(_ path: String, through version: Int64) -> RealmAdapterError {
        RealmAdapterError(
            .historyCompacted,
            "History of \(path) up to version \(version) was compacted after every registered adapter "
                + "processed it; ask for versions after \(version).",
            context: ["realm.path": path])
    }

    /// A malformed Realm path; `why` says what is wrong. Control characters show as `?`.
    static func invalidPath(_ path: String, _ why: String) -> RealmAdapterError {
        let shown = path.unicodeScalars.map { $0.value < 0x20 ? "?" : String($0) }.joined()
        return RealmAdapterError(
            .invalidPath, "Invalid Realm path '\(shown)': \(why). A path looks like /SQLDemo or /user-1/tasks.",
            context: ["realm.path": path])
    }

    /// `e`, as the reason a transaction of the Realm at `path` was rejected as a whole;
    /// `index` and `instruction` name the instruction that failed, when one did.
    static func rejected(
        _ e: RealmAdapterError, path: String, index: Int? = nil, instruction: Instruction? = nil
    ) -> RealmAdapterError {
        var place = ""
        var context = ["realm.path": path]
        if let index, let instruction {
            place = "instruction \(index) (\(instruction.summary)): "
            context["instruction"] = "\(index)"
        }
        var copy = e
        copy.message = rejectedWords + "\(place)\(e.message)" + (index == nil ? "" : ".")
        copy.context.merge(context) { old, _ in old }
        return copy
    }

    private static let rejectedWords = "Transaction rejected, nothing was applied: "

    /// Of an error ``rejected(_:path:index:instruction:)`` made, the reason alone, without its
    /// words for the whole transaction (for one object of it); other errors' message.
    var rejectionReason: String {
        guard message.hasPrefix(Self.rejectedWords) else { return message }
        var why = message.dropFirst(Self.rejectedWords.count)
        if context["instruction"] != nil, let r = why.range(of: "): ") {
            why = why[r.upperBound...].dropLast()  // the "." rejected added
        }
        return String(why)
    }

    /// A copy's target holds something already.
    package static func copyTargetNotEmpty(_ target: String, table: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "The store \(target) is not empty (its table \(table) has rows): a copy goes only to an empty store. "
                + "Give a new directory, or an empty database (DROP DATABASE and CREATE DATABASE).",
            context: ["store": target, "table": table])
    }

    /// A daemon or a load runs on a store to copy.
    static func copyBesideDaemon(adapter: String, store: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "A realm-adapter daemon (or a load) is running adapter '\(adapter)' on the store \(store): stop every "
                + "`realm-adapter run`, `events` and `serve` on it before copying (a copy is of one moment of the "
                + "store).",
            context: ["store": store, "adapter": adapter])
    }

    /// A copy's target, once committed, does not hold as many rows as its source.
    static func copyCountsDiffer(table: String, source: Int, target: Int) -> RealmAdapterError {
        RealmAdapterError(
            .storeUnavailable,
            "The copy's table \(table) has \(target) rows where the source has \(source): the copy is not "
                + "complete. Empty the target and copy again, with every daemon and server of the source stopped.",
            context: ["table": table])
    }
}
