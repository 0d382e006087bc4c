import Foundation

/// The objects of a Realm whose creating transaction went to the dead-letter record, for one
/// adapter: the database never got their rows.
///
/// A later change of one would find no row, and the convergence rule would then take the object
/// out of the Realm (the database lacks it), losing the change. Such a change goes to the
/// dead-letter record too, in order, until the database has the row (the user applied the dead
/// letters by hand, or wrote the row): its changes then go through again. Kept in the store's
/// metadata, so `realm-adapter dead-letter` and the daemon share it.
public struct UnsentObjects: Sendable, Equatable {
    /// By type, the identities (``key(_:)``).
    private(set) var objects: [String: Set<String>] = [:]

    var isEmpty: Bool { objects.isEmpty }

    static func metadataKey(adapter: String, path: String) -> String { "unsent-objects:\(adapter):\(path)" }

    /// An identity as kept: its kind and text (an int 7 and a string "7" are two).
    static func key(_ identity: Value) -> String { identity.kindName + ":" + identity.description }

    static func read(_ store: RealmStore, adapter: String, path: String) throws -> UnsentObjects {
        try store.metadata(metadataKey(adapter: adapter, path: path)).flatMap(decoded) ?? UnsentObjects()
    }

    /// The metadata's text as objects (nil if it is not theirs).
    private static func decoded(_ text: String) -> UnsentObjects? {
        (try? JSONDecoder().decode([String: Set<String>].self, from: Data(text.utf8))).map(UnsentObjects.init)
    }

    /// Those of every Realm of `adapter`, by path, in one read.
    static func readAll(_ store: RealmStore, adapter: String) throws -> [String: UnsentObjects] {
        let prefix = metadataKey(adapter: adapter, path: "")
        var all: [String: UnsentObjects] = [:]
        for (key, text) in try store.metadata(prefix: prefix) {
            all[String(key.dropFirst(prefix.count))] = decoded(text)
        }
        return all
    }

    func write(_ store: RealmStore, adapter: String, path: String) throws {
        let text = try isEmpty ? nil : String(decoding: JSONEncoder().encode(objects), as: UTF8.self)
        try store.setMetadata(Self.metadataKey(adapter: adapter, path: path), text)
    }

    /// Adds the objects `instructions` create (a transaction moved to the dead-letter record);
    /// returns the Realm's objects now.
    @discardableResult
    public static func record(_ instructions: [Instruction], _ store: RealmStore, adapter: String, path: String) throws
        -> UnsentObjects
    {
        var unsent = try read(store, adapter: adapter, path: path)
        let before = unsent.objects
        for case .insert(let type, let identity, _) in instructions {
            unsent.objects[type, default: []].insert(key(identity))
        }
        if unsent.objects != before { try unsent.write(store, adapter: adapter, path: path) }
        return unsent
    }

    /// The first object of these that `instructions` change, if any.
    func changed(by instructions: [Instruction]) -> (type: String, identity: Value)? {
        for i in instructions {
            guard let ids = objects[i.objectType], let identity = i.identity, ids.contains(Self.key(identity)) else {
                continue
            }
            return (i.objectType, identity)
        }
        return nil
    }

    /// Forgets an object (the database has its row now).
    mutating func remove(_ type: String, _ identity: Value) {
        objects[type]?.remove(Self.key(identity))
        if objects[type]?.isEmpty == true { objects[type] = nil }
    }
}

extension RealmAdapterError {
    /// A Realm change of an object whose creation the database never got (``UnsentObjects``).
    static func changesAnUnsentObject(type: String, identity: Value) -> RealmAdapterError {
        RealmAdapterError(
            .objectNotFound,
            """
            It changes \(type) \(Mapping.keyText(identity)), created in a transaction kept in the dead-letter \
            record: the database has no row for it. The change is kept there too, after it; apply them in \
            order (or write the row), and the object's later changes go through again.
            """,
            context: ["type": type])
    }
}
