import Foundation
import GraphQL
import RealmAdapter

/// A GraphQL result as JSON, its data's fields in the order the request asked for them.
enum GraphQLResponse {
    static func json(_ result: GraphQLResult) throws -> Data {
        var members: [JSONValue.Member] = []
        if let data = result.data { members.append(.init("data", GraphQLValues.json(data))) }
        if !result.errors.isEmpty {
            let errors = try JSONEncoder().encode(result.errors)
            members.append(.init("errors", try JSONValue(parsing: errors)))
        }
        var bytes = JSONValue.object(members).utf8()
        bytes.append(UInt8(ascii: "\n"))
        return Data(bytes)
    }

}
