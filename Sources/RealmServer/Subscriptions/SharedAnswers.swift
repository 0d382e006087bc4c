import Foundation
import GraphQL

/// One answer per Realm version and request, shared by every subscription that asks the same
/// while it is being computed: a thousand clients of one app that subscribe at once to one query
/// cost one run of it. An answer is kept only until it is computed (kept longer, the answers of
/// requests that come and go grew the server without bound until the Realm changed).
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
        defer { if answers[key] == t { answers[key] = nil } }
        return try await t.value
    }
}
