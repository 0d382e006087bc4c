/// Errors of change sets, event handlers and webhooks.
extension RealmAdapterError {
    /// A change set asked for a transaction written while no adapter recording changes followed the Realm.
    static func changesNotRecorded(path: String, version: Int64) -> RealmAdapterError {
        RealmAdapterError(
            .invalidState,
            "Version \(version) of \(path) was written before an event handler or webhook followed the Realm, "
                + "so what it changed was not recorded. Change sets exist for transactions written after the "
                + "handler was first registered.",
            context: ["realm.path": path, "version": "\(version)"])
    }
}

extension RealmAdapterError {
    /// A webhook delivery failed; `reason` says how (never the request's headers or body).
    static func webhookFailed(_ webhook: WebhookConfiguration, _ reason: String) -> RealmAdapterError {
        RealmAdapterError(
            .webhookFailed,
            webhook.name == webhook.displayURL
                ? "The webhook at \(webhook.displayURL) failed: \(reason)."
                : "The webhook \(webhook.name) at \(webhook.displayURL) failed: \(reason).",
            context: ["webhook": webhook.name])
    }
}
