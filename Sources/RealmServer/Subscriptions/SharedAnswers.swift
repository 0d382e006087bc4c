import Foundation
import GraphQL

/// One answer per Realm version and request, shared by every subscription that asks the same:
/// a thousand clients of one app, subscribed to one query, cost one run of it per commit.
actor SharedAnswers {
    /// Per path, the version the answers are for (older ones are dropped when it moves).
    private var versions: [String: Int64] = [:]
    private var answers: [String: Task<Data, Error>] = [:]

    /// The answer to `request` as of `version` of the Realm at `path`: computed once, by the
    /// first to ask, and awaited by the others.
    func answer(
        path: String, version: Int64, request: String, compute: @escaping @Sendable () async throws -> Data
    ) async throws -> Data {
        if versions[path] != version {
            versions[path] = version
            answers = answers.filter { !$0.key.hasPrefix(path + "\u{0}") }
        }
        let key = path + "\u{0}" + request
        if let t = answers[key] { return try await t.value }
        let t = Task { try await compute() }
        answers[key] = t
        return try await t.value
    }
}
