import Foundation

/// `events`: change events delivered to webhooks, by `realm-adapter run` (beside the sync) or
/// `realm-adapter events` (alone).
public struct EventsConfiguration: Sendable {
    public var webhooks: [WebhookConfiguration] = []
    /// `events.retry`: the backoff between attempts of one delivery, and the attempts before it
    /// becomes a dead letter (default 10 attempts, 0.5 s doubling up to 30 s).
    public var retry = DatabaseConfiguration.Retry()

    public init() {}

    init(_ reader: JSONObjectReader?, environment: [String: String]) throws {
        guard var r = reader else { return }
        if let rr = try r.object("retry") { try retry.update(from: rr) }
        for (i, item) in (try r.array("webhooks") ?? []).enumerated() {
            let path = r.path("webhooks") + "[\(i)]"
            guard case .object(let members) = item else {
                throw RealmAdapterError.atJSONPath(path, "must be an object, found \(item.kindName).")
            }
            let w = try JSONObjectReader(.object(members), path: path, code: .invalidConfiguration)
            webhooks.append(try WebhookConfiguration(w, environment: environment))
        }
        let names = webhooks.map(\.name)
        if let twice = names.first(where: { n in names.filter { $0 == n }.count > 1 }) {
            throw r.error("webhooks", "two webhooks are named '\(twice)'; give each a distinct name.")
        }
        try r.finish()
    }
}

/// One webhook: the transactions of the Realms `pathRegex` matches, POSTed as JSON to `url`.
public struct WebhookConfiguration: Sendable {
    /// Keeps the webhook's place in each Realm (default: the URL without its query): renaming
    /// it, or changing a URL without a name, starts it afresh from the Realms' current versions.
    public var name: String
    public var pathRegex: String
    public var url: URL
    /// Only transactions that change objects of these types (or add them) are sent; nil: all.
    public var types: Set<String>?
    /// Extra request headers (`Authorization`, …). Never logged.
    public var headers: [(String, String)]
    /// The HMAC-SHA256 key of the `X-Realm-Adapter-Signature` header, from `secretEnv`.
    public var secret: Secret?
    /// The error of a `secretEnv` that names an unset variable: only delivering needs the
    /// secret (``services(store:schema:logger:)`` throws it), so `status` and `validate` run without it.
    var unsetSecret: RealmAdapterError?
    /// Seconds an endpoint has to answer (default 10).
    public var timeoutSeconds: Int

    public init(name: String? = nil, pathRegex: String, url: URL, types: Set<String>? = nil, timeoutSeconds: Int = 10) {
        self.name = name ?? Self.defaultName(url)
        self.pathRegex = pathRegex
        self.url = url
        self.types = types
        self.headers = []
        self.timeoutSeconds = timeoutSeconds
    }

    init(_ reader: JSONObjectReader, environment: [String: String]) throws {
        var r = reader
        let text = try r.requiredString("url")
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host?.isEmpty == false
        else {
            throw r.error(
                "url", "must be an http:// or https:// URL with a host, such as https://example.com/hooks/realm.")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw r.error("url", "the port \(port) is not between 1 and 65535.")
        }
        guard url.user == nil, url.password == nil else {
            throw r.error("url", "must not hold credentials; send them in headers (\"Authorization\") instead.")
        }
        self.url = url
        pathRegex = try r.requiredString("pathRegex")
        guard !pathRegex.isEmpty else { throw r.error("pathRegex", "is empty; \"^/\" takes every Realm.") }
        guard (try? PathFilter(pathRegex)) != nil else {
            throw r.error("pathRegex", "'\(pathRegex)' is not a valid regular expression.")
        }
        name = try r.string("name") ?? Self.defaultName(url)
        guard !name.isEmpty else { throw r.error("name", "must not be empty.") }
        // status and logs print it as it is.
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) else {
            throw r.error("name", "must not hold control characters.")
        }
        if let list = try r.array("types") {
            guard !list.isEmpty else {
                throw r.error("types", "is empty, which would send nothing; leave it out to send every transaction.")
            }
            types = Set(
                try list.enumerated().map { i, v in
                    guard case .string(let s) = v, !s.isEmpty else {
                        throw r.error("types", "element \(i) must be a type name (a non-empty string).")
                    }
                    return s
                })
        }
        headers = try r.stringMap("headers")
        for (name, value) in headers {
            // RFC 9110 field names are tokens; values may not break the line.
            let token = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~0123456789")
                .union(CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(token.contains) else {
                throw r.error("headers", "'\(name)' is not a header name (letters, digits and !#$%&'*+-.^_`|~ only).")
            }
            guard !value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7f }) else {
                throw r.error("headers", "the value of \(name) holds a line break or another control character.")
            }
            guard !Self.ownHeaders.contains(name.lowercased()) else {
                throw r.error(
                    "headers",
                    "\(name) is set by realm-adapter itself (\(Self.ownHeaders.sorted().joined(separator: ", "))).")
            }
        }
        if let variable = try r.string("secretEnv") {
            guard !variable.isEmpty else { throw r.error("secretEnv", "must name an environment variable.") }
            if let value = environment[variable], !value.isEmpty {
                secret = Secret(value)
            } else {
                unsetSecret = r.error("secretEnv", "the environment variable \(variable) is not set (or empty).")
            }
        }
        timeoutSeconds = try r.int("timeoutSeconds", in: 1...3600) ?? 10
        try r.finish()
    }

    /// Headers each delivery sets itself, which `headers` may not give.
    static let ownHeaders: Set<String> = [
        "content-type", "content-length", "host", "idempotency-key", "x-realm-adapter-signature", "transfer-encoding",
        "connection",
    ]

    /// The URL without query or fragment (which may hold tokens): names the webhook in logs too.
    public var displayURL: String { Self.defaultName(url) }

    static func defaultName(_ url: URL) -> String {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: false)
        c?.query = nil
        c?.fragment = nil
        c?.user = nil
        c?.password = nil
        return c?.string ?? url.absoluteString
    }
}
