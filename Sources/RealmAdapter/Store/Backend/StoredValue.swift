import Foundation

/// A value as the store's SQL holds it: one of SQLite's five storage classes.
///
/// Core encodes a Realm ``Value`` into one (``RealmTables/encode(_:)``) and decodes one by the
/// property's type (``RealmTables/decode(_:as:)``); each ``StoreBackend`` maps its columns onto
/// these five, so the value rule is written once, above every backend.
package enum StoredValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// A Swift type the store reads from and binds as a ``StoredValue`` (as GRDB's
/// `DatabaseValueConvertible`): rows' typed subscripts and the typed `fetch` helpers use it.
package protocol StoredConvertible: StoreArgumentConvertible {
    var storedValue: StoredValue { get }
    /// The value of this type that `stored` holds, or nil when it holds another kind.
    static func fromStored(_ stored: StoredValue) -> Self?
}

extension StoredValue: StoredConvertible {
    package var storedValue: StoredValue { self }
    package static func fromStored(_ stored: StoredValue) -> StoredValue? { stored }
}

extension Int64: StoredConvertible {
    package var storedValue: StoredValue { .integer(self) }
    package static func fromStored(_ stored: StoredValue) -> Int64? {
        switch stored {
        case .integer(let n): n
        case .real(let d): Int64(exactly: d)
        default: nil
        }
    }
}

extension Int: StoredConvertible {
    package var storedValue: StoredValue { .integer(Int64(self)) }
    package static func fromStored(_ stored: StoredValue) -> Int? {
        Int64.fromStored(stored).flatMap(Int.init(exactly:))
    }
}

extension Bool: StoredConvertible {
    package var storedValue: StoredValue { .integer(self ? 1 : 0) }
    package static func fromStored(_ stored: StoredValue) -> Bool? { Int64.fromStored(stored).map { $0 != 0 } }
}

extension Double: StoredConvertible {
    package var storedValue: StoredValue { .real(self) }
    package static func fromStored(_ stored: StoredValue) -> Double? {
        switch stored {
        case .integer(let n): Double(n)
        case .real(let d): d
        default: nil
        }
    }
}

extension String: StoredConvertible {
    package var storedValue: StoredValue { .text(self) }
    package static func fromStored(_ stored: StoredValue) -> String? {
        if case .text(let s) = stored { return s }
        return nil
    }
}

extension Data: StoredConvertible {
    package var storedValue: StoredValue { .blob(self) }
    package static func fromStored(_ stored: StoredValue) -> Data? {
        switch stored {
        case .blob(let d): d
        case .text(let s): Data(s.utf8)
        default: nil
        }
    }
}

extension Optional: StoreArgumentConvertible where Wrapped: StoredConvertible {}

extension Optional: StoredConvertible where Wrapped: StoredConvertible {
    package var storedValue: StoredValue { self?.storedValue ?? .null }
    /// `.some(nil)` for a NULL; nil only when a value of another kind is there.
    package static func fromStored(_ stored: StoredValue) -> Wrapped?? {
        if case .null = stored { return .some(nil) }
        return Wrapped.fromStored(stored).map { .some($0) }
    }
}

/// One argument of a statement: a value as the store's SQL holds it, or a Realm value that
/// each backend binds in its own form (the value rule of ``RealmTables/encode(_:)``).
package enum StoreArgument: Sendable {
    case stored(StoredValue)
    /// A Realm value in a property's column.
    case value(Value)
    /// A Realm value in a column of keys (a type's key, a link, a list's owner), whose kind
    /// varies from row to row (``StoreDialect/keyColumnType``).
    case key(Value)
}

/// What can be bound as a ``StoreArgument``: every ``StoredConvertible``, and the argument itself.
package protocol StoreArgumentConvertible {
    var storeArgument: StoreArgument { get }
}

extension StoreArgument: StoreArgumentConvertible {
    package var storeArgument: StoreArgument { self }
}

extension StoredConvertible {
    package var storeArgument: StoreArgument { .stored(storedValue) }
}

/// The arguments bound to a statement's parameters, in order (as GRDB's `StatementArguments`).
package struct StoreArguments: ExpressibleByArrayLiteral, Sendable {
    package var values: [StoreArgument]

    package init(_ values: [StoreArgument]) { self.values = values }

    package init(arrayLiteral elements: (any StoreArgumentConvertible)?...) {
        values = elements.map { $0?.storeArgument ?? .stored(.null) }
    }

    package mutating func append(_ value: (any StoreArgumentConvertible)?) {
        values.append(value?.storeArgument ?? .stored(.null))
    }
}
