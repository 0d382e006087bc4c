import Foundation
import Synchronization

/// A named point in the product where a test can make the process crash, pause or fail, to
/// hit the crash window of a guarantee on purpose instead of by luck (after TiKV's fail-rs).
///
/// Failpoints exist in debug builds only: in a release build ``hit()`` is empty and the
/// environment is never read. Tests configure them in the environment of the process they
/// start, `REALM_ADAPTER_FAILPOINTS`, as `;`-separated `name=actions`:
///
/// ```sh
/// REALM_ADAPTER_FAILPOINTS='realm-to-db.after-commit=5*off->kill' realm-adapter run -c adapter.json
/// ```
///
/// Actions are taken one per hit, in turn, each as many times as its count (`3*`); the last
/// one stays. So `5*off->kill` lets five hits pass and kills the process at the sixth.
///
/// | action | what the hit does |
/// |---|---|
/// | `off` | nothing |
/// | `kill` | SIGKILL to the process itself: no clean-up, as in a crash |
/// | `kill(ms)` | pauses the calling thread, then SIGKILL (other threads go on meanwhile) |
/// | `sleep(ms)` | pauses the calling thread |
/// | `error` | throws ``RealmAdapterError/Code/failpoint`` |
///
/// Every action but `off` first writes `failpoint NAME: ACTION` to standard error, so a test
/// can tell that it fired. The points and the windows they open are listed in ``all``.
public struct Failpoint: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    /// The crash window the point opens, for the docs and `--help`.
    public let window: String

    public var description: String { name }

    /// Takes the action configured for this point, if any (debug builds only).
    public func hit() throws {
        #if DEBUG
            guard let action = (Self.scoped ?? Self.registry).next(name) else { return }
            try action.perform(at: name)
        #endif
    }

    /// Runs `body` with failpoints configured by `specification` (the environment's syntax)
    /// for the hits in its task and the tasks it starts, instead of the environment's: tests in
    /// one process (the connector scenarios) open crash windows with `error` without touching
    /// each other. A debug build's feature; a release build runs `body` as it is.
    package static func with<T>(_ specification: String, _ body: () async throws -> T) async rethrows -> T {
        #if DEBUG
            try await $scoped.withValue(FailpointRegistry(specification), operation: body)
        #else
            try await body()
        #endif
    }

    /// The environment variable that configures failpoints.
    public static let environmentVariable = "REALM_ADAPTER_FAILPOINTS"

    /// Whether this build has failpoints (a debug build).
    public static var isCompiled: Bool {
        #if DEBUG
            true
        #else
            false
        #endif
    }

    #if DEBUG
        static let registry = FailpointRegistry(ProcessInfo.processInfo.environment[environmentVariable] ?? "")
        @TaskLocal static var scoped: FailpointRegistry?
    #endif
}

extension Failpoint {
    // Database → Realm.
    /// The daemon prepared the database (Postgres: the slot exists); the change stream has not started.
    public static let dbToRealmBeforeStream = Failpoint(
        name: "db-to-realm.before-stream",
        window: "the database prepared (the slot created), the change stream not yet started")
    /// A database transaction (or part) arrived from the change stream; nothing of it is applied.
    public static let dbToRealmReceived = Failpoint(
        name: "db-to-realm.received",
        window: "a database transaction received from the change stream, nothing of it applied")
    /// A database transaction is mapped (and the RealmIds it generated are written back to the
    /// database); its Realm write has not committed.
    public static let dbToRealmBeforeCommit = Failpoint(
        name: "db-to-realm.before-commit",
        window: "a database transaction mapped, RealmIds written back, the Realm not yet written")
    /// A database transaction (or a part of a large one) is committed in the Realm with its
    /// source position; the database has not been told (Postgres: the flush LSN not confirmed).
    public static let dbToRealmAfterCommit = Failpoint(
        name: "db-to-realm.after-commit",
        window: "the Realm committed a database transaction (or part), its position not yet confirmed")

    // Realm → database.
    /// Realm transactions are mapped to writes; the database transaction has not begun.
    public static let realmToDbBeforeCommit = Failpoint(
        name: "realm-to-db.before-commit",
        window: "Realm transactions mapped to database writes, the database transaction not yet run")
    /// The database committed Realm transactions with their state-table marker; the adapter's
    /// cursor has not advanced past them.
    public static let realmToDbAfterCommit = Failpoint(
        name: "realm-to-db.after-commit",
        window: "the database committed Realm transactions and their marker, the cursor not yet advanced")
    /// A rejected Realm transaction is in the dead-letter table (with its marker); the cursor
    /// has not advanced past it.
    public static let realmToDbAfterDeadLetter = Failpoint(
        name: "realm-to-db.after-dead-letter",
        window: "a rejected Realm transaction dead-lettered with its marker, the cursor not yet advanced")

    // The loader.
    /// The snapshot's position is fixed (Postgres: the slot created with its exported snapshot);
    /// no row is read yet. The database may change meanwhile: the snapshot must not see it.
    public static let loadAfterSnapshotPoint = Failpoint(
        name: "load.after-snapshot-point",
        window: "the snapshot's position fixed (the slot created), no row read yet")
    /// A batch of loaded rows is committed in the Realms; the load goes on.
    public static let loadAfterBatch = Failpoint(
        name: "load.after-batch",
        window: "a batch of the load committed in the Realms, the load not finished")
    /// Every table is loaded; the hand-off position is not recorded and the load not marked done.
    public static let loadBeforeHandOff = Failpoint(
        name: "load.before-hand-off",
        window: "every table loaded, the hand-off position not yet recorded")

    /// Every failpoint, in the order of the guarantees they test.
    public static let all: [Failpoint] = [
        dbToRealmBeforeStream, dbToRealmReceived, dbToRealmBeforeCommit, dbToRealmAfterCommit,
        realmToDbBeforeCommit, realmToDbAfterCommit, realmToDbAfterDeadLetter,
        loadAfterSnapshotPoint, loadAfterBatch, loadBeforeHandOff,
    ]
}

#if DEBUG
    /// The configured actions of each failpoint and how far each has got.
    final class FailpointRegistry: Sendable {
        private let state: Mutex<[String: [FailpointAction]]>

        init(_ specification: String) {
            var actions: [String: [FailpointAction]] = [:]
            for entry in specification.split(separator: ";") where !entry.isEmpty {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, Failpoint.all.contains(where: { $0.name == parts[0] }) else {
                    Self.complain(
                        "unknown failpoint or missing '=' in '\(entry)'; known: "
                            + Failpoint.all.map(\.name).joined(separator: ", "))
                }
                actions[parts[0]] = parts[1].components(separatedBy: "->").map { term in
                    guard let action = FailpointAction(term) else { Self.complain("cannot read the action '\(term)'") }
                    return action
                }
            }
            state = Mutex(actions)
        }

        /// The action for this hit of `name` (nil if none is configured).
        func next(_ name: String) -> FailpointAction? {
            state.withLock { all in
                guard var actions = all[name], let first = actions.first else { return nil }
                if actions.count > 1 {
                    if first.count <= 1 {
                        actions.removeFirst()
                    } else {
                        actions[0].count -= 1
                    }
                    all[name] = actions
                }
                return first
            }
        }

        /// A mistyped failpoint would make a test pass without testing anything: stop at once.
        static func complain(_ message: String) -> Never {
            FileHandle.standardError.write(Data("\(Failpoint.environmentVariable): \(message)\n".utf8))
            exit(70)
        }
    }

    /// One term of a failpoint's configuration: `[count*]kind[(milliseconds)]`.
    struct FailpointAction: Sendable {
        enum Kind: String, Sendable { case off, kill, sleep, error }
        var kind: Kind
        var milliseconds: Int
        var count: Int
        let text: String

        init?(_ term: String) {
            text = term.trimmingCharacters(in: .whitespaces)
            var rest = Substring(text)
            count = 1
            if let star = rest.firstIndex(of: "*") {
                guard let n = Int(rest[..<star]), n > 0 else { return nil }
                count = n
                rest = rest[rest.index(after: star)...]
            }
            milliseconds = 0
            if let open = rest.firstIndex(of: "("), rest.hasSuffix(")") {
                guard let ms = Int(rest[rest.index(after: open)..<rest.index(before: rest.endIndex)]), ms >= 0 else {
                    return nil
                }
                milliseconds = ms
                rest = rest[..<open]
            }
            guard let kind = Kind(rawValue: String(rest)) else { return nil }
            self.kind = kind
        }

        func perform(at name: String) throws {
            guard kind != .off else { return }
            FileHandle.standardError.write(Data("failpoint \(name): \(text)\n".utf8))
            if milliseconds > 0 { usleep(UInt32(milliseconds) * 1000) }
            switch kind {
            case .off, .sleep:
                return
            case .kill:
                kill(getpid(), SIGKILL)
                while true { pause() }
            case .error:
                throw RealmAdapterError.failpoint(name)
            }
        }
    }
#endif
