import Crypto
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Delivers change sets to one webhook: each as a JSON POST (``ChangeSet/json``) with an
/// `Idempotency-Key` header (the transaction's `path@version`, the same on every retry) and,
/// with a secret, `X-Realm-Adapter-Signature: sha256=<hex HMAC-SHA256 of the body>`.
///
/// Only a 2xx answer delivers. Redirects are not followed (a POST should not be re-sent
/// elsewhere unseen): a 3xx is a failure that names where it pointed. Timeouts, refused
/// connections and other answers are failures too, retried by the ``EventHandler`` it runs in.
public final class Webhook: Sendable {
    public let configuration: WebhookConfiguration
    private let session: URLSession
    private let transfers = Transfers()

    public init(_ configuration: WebhookConfiguration) {
        self.configuration = configuration
        let c = URLSessionConfiguration.ephemeral
        c.timeoutIntervalForRequest = TimeInterval(configuration.timeoutSeconds)
        c.timeoutIntervalForResource = TimeInterval(configuration.timeoutSeconds)
        session = URLSession(configuration: c, delegate: transfers, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Whether the change set is one to send: it changed something, and, when the webhook
    /// names types, objects (or the schema) of one of them.
    public func wants(_ changes: ChangeSet) -> Bool {
        guard !changes.isEmpty else { return false }
        guard let types = configuration.types else { return true }
        return changes.types.contains { types.contains($0.objectType) }
            || changes.schemaChanges.contains { types.contains($0.objectType) }
    }

    /// The event handler that delivers the Realms' change sets to this webhook, named
    /// `webhook:<name>` (its dead letters and lag are listed under that name).
    public func handler(store: RealmStore, retry: DatabaseConfiguration.Retry, logger: Logger) throws -> EventHandler {
        var logger = logger
        logger[metadataKey: "webhook"] = "\(configuration.displayURL)"
        return try EventHandler(
            store: store, name: "webhook:\(configuration.name)", pathRegex: configuration.pathRegex, retry: retry,
            logger: logger
        ) { [self] event in
            guard wants(event.changes) else { return }
            try await deliver(event.changes)
        }
    }

    /// POSTs the change set.
    ///
    /// - Throws: `webhookFailed`, saying why (the status an endpoint answered, a timeout, a refused connection).
    public func deliver(_ changes: ChangeSet) async throws {
        let body = Data(changes.json.serialized().utf8)
        var request = URLRequest(url: configuration.url)
        request.httpMethod = "POST"
        request.httpBody = body
        // The configured headers first: the delivery's own come after and win (the configuration
        // refuses them anyway).
        for (name, value) in configuration.headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(Self.idempotencyKey(changes), forHTTPHeaderField: "Idempotency-Key")
        if let secret = configuration.secret {
            request.setValue(Self.signature(body, secret: secret), forHTTPHeaderField: "X-Realm-Adapter-Signature")
        }
        let response: URLResponse
        do {
            response = try await Self.send(request, session, transfers)
        } catch let e as URLError {
            throw RealmAdapterError.webhookFailed(configuration, Self.reason(e, timeout: configuration.timeoutSeconds))
        }
        guard let http = response as? HTTPURLResponse else {
            throw RealmAdapterError.webhookFailed(configuration, "the answer was not HTTP")
        }
        switch http.statusCode {
        case 200..<300: return
        case 300..<400:
            let location = http.value(forHTTPHeaderField: "Location").map(Self.shown) ?? "nowhere"
            throw RealmAdapterError.webhookFailed(
                configuration,
                "it answered \(http.statusCode), a redirect to \(location), which webhooks do not follow; "
                    + "configure the URL it points to")
        default:
            throw RealmAdapterError.webhookFailed(configuration, "it answered HTTP \(http.statusCode)")
        }
    }

    /// An endpoint's `Location` as logs may show it: without query or fragment (which may hold
    /// tokens), and with every character outside printable ASCII escaped (a terminal escape in
    /// a header must not reach an operator's terminal).
    static func shown(_ location: String) -> String {
        let bare = URL(string: location).map(WebhookConfiguration.defaultName) ?? location
        return bare.unicodeScalars.map { s in
            (0x20..<0x7f).contains(s.value) ? String(s) : "\\u{\(String(s.value, radix: 16))}"
        }.joined()
    }

    /// `path@version`, percent-encoded outside printable ASCII (header values are ASCII): the
    /// body's `id` as a header.
    public static func idempotencyKey(_ changes: ChangeSet) -> String {
        let allowed = CharacterSet(
            charactersIn: "!#$&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~")
        return changes.id.addingPercentEncoding(withAllowedCharacters: allowed) ?? changes.id
    }

    /// `sha256=` and the hex HMAC-SHA256 of `body` keyed by the secret.
    public static func signature(_ body: Data, secret: Secret) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.value.utf8)))
        return "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    static func reason(_ e: URLError, timeout: Int) -> String {
        switch e.code {
        case .timedOut: "it did not answer within \(timeout) s (timeoutSeconds)"
        case .cannotConnectToHost: "the connection was refused (is the endpoint running?)"
        case .cannotFindHost, .dnsLookupFailed: "its host name does not resolve"
        case .networkConnectionLost: "the connection closed before an answer"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate:
            "the TLS handshake failed (\(e.localizedDescription))"
        default: e.localizedDescription
        }
    }
}

extension Webhook {
    /// One request; its answer is its status line and headers: the body is never kept (an endpoint
    /// that answers without end took the process's memory, and held back every delivery after).
    /// Cancelling the calling task ends the wait at once with `CancellationError`, and the
    /// transfer is left to end by itself (within `timeoutSeconds`). Its URLSession task is never
    /// cancelled: on Linux a cancel that meets the transfer's own end crashes the process ("a task
    /// that is not in the registry", seen in a CI run and reproduced by WebhookTests), and the
    /// async `data(for:)` deadlocks there (its cancellation handler waits for the session's queue
    /// under the task's status lock, which the finished transfer waits for).
    static func send(_ request: URLRequest, _ session: URLSession, _ transfers: Transfers) async throws -> URLResponse {
        let waiter = Waiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<URLResponse, any Error>) in
                guard waiter.wait(done) else { return }
                let task = session.dataTask(with: request)
                transfers.begin(task, waiter)
                task.resume()
            }
        } onCancel: {
            waiter.end(.failure(CancellationError()))
        }
    }

    /// The continuation of one request, resumed once: by the answer or by the cancellation,
    /// whichever comes first (never under its lock).
    final class Waiter: @unchecked Sendable {
        // @unchecked: its state is behind the lock.
        private let lock = NSLock()
        private var continuation: CheckedContinuation<URLResponse, any Error>?
        private var ended = false

        /// Keeps `continuation`, or resumes it at once (cancelled) if the request was cancelled before.
        func wait(_ continuation: CheckedContinuation<URLResponse, any Error>) -> Bool {
            let cancelled = lock.withLock {
                if !ended { self.continuation = continuation }
                return ended
            }
            if cancelled { continuation.resume(throwing: CancellationError()) }
            return !cancelled
        }

        func end(_ result: Result<URLResponse, any Error>) {
            let c = lock.withLock {
                ended = true
                defer { continuation = nil }
                return continuation
            }
            c?.resume(with: result)
        }
    }
}

/// The session's transfers: each request's waiter ends with its answer's head (status and
/// headers), or with the transfer's error; the body is read and dropped as it comes. Redirects
/// come back as answers instead of being followed.
final class Transfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: its state is behind the lock.
    private let lock = NSLock()
    private var waiters: [Int: Webhook.Waiter] = [:]

    func begin(_ task: URLSessionTask, _ waiter: Webhook.Waiter) {
        lock.withLock { waiters[task.taskIdentifier] = waiter }
    }

    private func waiter(_ task: URLSessionTask, ending: Bool) -> Webhook.Waiter? {
        lock.withLock { ending ? waiters.removeValue(forKey: task.taskIdentifier) : waiters[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        waiter(dataTask, ending: false)?.end(.success(response))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // Ended already by its answer's head, unless the transfer failed before one came.
        waiter(task, ending: true)?.end(.failure(error ?? URLError(.badServerResponse)))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
