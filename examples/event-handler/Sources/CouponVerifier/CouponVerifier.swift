import Logging
import RealmAdapter

/// The legacy event handler's example, in Swift: a backend that checks each coupon an app (or
/// the database) creates and writes the verdict back into the same Realm.
///
/// A `Coupon` has a `code` (its primary key) and a `status`: null until checked, then `valid`
/// or `invalid`. The verdict is written through the event, so it does not come back to the
/// handler as another event.
public enum CouponVerifier {
    public static let schema = ObjectSchema(
        name: "Coupon", primaryKey: "code",
        properties: [
            Property(name: "code", type: .scalar(.string)),
            Property(name: "status", type: .scalar(.string), isOptional: true),
        ])

    /// An event handler for the Realms whose path matches `pathRegex` that accepts the codes in
    /// `valid`; `onEvent` is told of each event it handled (with how many coupons it checked).
    public static func handler(
        store: RealmStore, pathRegex: String, valid: Set<String>, logger: Logger = Logger(label: "coupons"),
        onEvent: @escaping @Sendable (ChangeEvent, Int) -> Void = { _, _ in }
    ) throws -> EventHandler {
        try EventHandler(store: store, name: "coupon-verifier", pathRegex: pathRegex, logger: logger) { event in
            guard let coupons = event.changes[type: "Coupon"] else { return onEvent(event, 0) }
            // New coupons, and coupons whose status was cleared: the ones still unchecked.
            let unchecked = (coupons.inserted + coupons.modified.map(\.object)).filter { $0.values["status"] == .null }
            if !unchecked.isEmpty {
                try event.write { tx in
                    for c in unchecked {
                        guard case .string(let code) = c.identity else { continue }
                        try tx.update(
                            "Coupon", c.identity, ["status": .string(valid.contains(code) ? "valid" : "invalid")])
                    }
                }
            }
            onEvent(event, unchecked.count)
        }
    }
}
