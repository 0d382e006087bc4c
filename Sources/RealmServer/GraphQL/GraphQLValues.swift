import Foundation
import GraphQL
import RealmAdapter

/// Realm values as GraphQL gives and takes them: ints, floats, strings and booleans as
/// themselves; dates (ISO 8601), decimals, UUIDs, ObjectIds and data (base64) as strings.
enum GraphQLValues {
    static func scalar(_ s: ScalarType) -> GraphQLScalarType {
        switch s {
        case .bool: GraphQLBoolean
        case .int: GraphQLInt
        case .float, .double: GraphQLFloat
        case .string, .data, .date, .decimal, .uuid, .objectId: GraphQLString
        }
    }

    /// An `int` GraphQL's 32-bit `Int` cannot carry.
    static func pastInt32(_ type: String, _ property: String, _ value: Int64) -> GraphQLError {
        GraphQLError(
            message: "\(type).\(property) is \(value), past GraphQL's 32-bit Int: set "
                + "server.presentIntsAsFloatsInSchema to true to show ints as Floats (exact up to 2^53).")
    }

    /// A stored value for GraphQL's output.
    static func output(_ v: RealmAdapter.Value) -> (any Sendable)? {
        output(v.json)
    }

    static func output(_ j: JSONValue) -> (any Sendable)? {
        switch j {
        case .null: nil
        case .bool(let b): b
        case .int(let i): Int(i)
        case .double(let d): d
        case .number(let text): Double(text)
        case .string(let s): s
        // GraphQL's executor fails the whole answer on a null inside a list (GraphQLSwift 4.3, a
        // MapError), and would drop it at best: it gets the list without them. DirectQuery, which
        // answers every query but those the executor must, keeps them.
        case .array(let a): a.compactMap(output)
        case .object: j.serialized()
        }
    }

    /// A GraphQL value as JSON: an input (then coerced to the property by the core's rules), or an answer.
    static func json(_ m: Map) -> JSONValue {
        switch m {
        case .undefined, .null: .null
        case .bool(let b): .bool(b)
        case .number(let n): n.storageType == .double ? .double(n.doubleValue) : .int(n.int64Value)
        case .string(let s): .string(s)
        case .array(let a): .array(a.map(json))
        case .dictionary(let d): .object(d.map { .init($0.key, json($0.value)) })
        }
    }

    /// JSON (a request's variables) as a GraphQL value: the inverse of ``json(_:)``.
    static func map(_ j: JSONValue) -> Map {
        switch j {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .number(Number(Int(i)))
        case .double(let d): .number(Number(d))
        case .number(let text): .number(Number(Double(text) ?? .nan))
        case .string(let s): .string(s)
        case .array(let a): .array(a.map(map))
        case .object(let o): .dictionary(.init(uniqueKeysWithValues: o.map { ($0.key, map($0.value)) }))
        }
    }
}
