// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "realm-adapter",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "RealmAdapter", targets: ["RealmAdapter"]),
        .library(name: "PostgresConnector", targets: ["PostgresConnector"]),
        .library(name: "SQLiteConnector", targets: ["SQLiteConnector"]),
        .library(name: "SQLServerConnector", targets: ["SQLServerConnector"]),
        .executable(name: "realm-adapter", targets: ["realm-adapter"]),
        .executable(name: "realm-adapter-bench", targets: ["realm-adapter-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Metrics: counted in core through swift-metrics, served in Prometheus's format by the CLI.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The CLI's HTTP endpoints (/metrics, /health/live, /health/ready).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // SHA-1 for name-based UUIDs (the RealmIds given to rows the database created).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // `realm-adapter serve`: GraphQL schemas made at run time, signed tokens, bcrypt password hashes.
        .package(url: "https://github.com/GraphQLSwift/GraphQL", from: "4.3.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        // GraphQL subscriptions over WebSocket.
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // Studio's pages (`/studio`): Mustache templates, every value HTML-escaped where it is shown.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // `server.email`: the SMTP client's STARTTLS and SMTPS (the same TLS as Hummingbird's).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.2"),
        // HTTP parts as swift-http-types has them, for the server's own channel handlers.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        // `swift package generate-documentation`: the DocC catalogue, built by scripts/test.sh.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Property-based tests of the value rule (every kind, every write path).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        .target(
            name: "RealmAdapter",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // libpq, through a thin system-library module (Debian: libpq-dev).
        .systemLibrary(
            name: "CLibPQ",
            path: "Connectors/Postgres/CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // libpq's connections, sessions, results and errors, and Postgres's types: what the
        // connector and the store's Postgres backend (issue 43) share.
        .target(
            name: "PostgresWire",
            dependencies: [
                "RealmAdapter",
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Connectors/Postgres/Sources/PostgresWire"
        ),
        // The Realm store on Postgres (issue 43, being built: docs/plans/store-on-postgres.md).
        .target(
            name: "PostgresStore",
            dependencies: ["RealmAdapter", "PostgresWire"],
            path: "Sources/PostgresStore"
        ),
        .target(
            name: "PostgresConnector",
            dependencies: [
                "RealmAdapter",
                "PostgresWire",
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Connectors/Postgres/Sources/PostgresConnector"
        ),
        // FreeTDS db-lib, through a thin system-library module (Debian: freetds-dev).
        .systemLibrary(
            name: "CFreeTDS",
            path: "Connectors/SQLServer/CFreeTDS",
            providers: [.apt(["freetds-dev"])]
        ),
        .target(
            name: "SQLServerConnector",
            dependencies: [
                "RealmAdapter",
                "CFreeTDS",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Connectors/SQLServer/Sources/SQLServerConnector"
        ),
        // A relational connector for an app's SQLite database: the example of writing one, and
        // what the core's scenarios run against in plain `swift test`.
        .target(
            name: "SQLiteConnector",
            dependencies: [
                "RealmAdapter",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "examples/sqlite-connector/Sources/SQLiteConnector"
        ),
        .executableTarget(
            name: "realm-adapter",
            dependencies: [
                "RealmAdapter",
                "PostgresConnector",
                "PostgresStore",
                "SQLiteConnector",
                "SQLServerConnector",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "RealmServer",
            ]
        ),
        // HTTP: the metrics and health endpoints, and `realm-adapter serve` (users, tokens,
        // permissions, GraphQL).
        .target(
            name: "RealmServer",
            dependencies: [
                "RealmAdapter",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                // `server.tls`: HTTPS and WSS (swift-nio-ssl, through Hummingbird).
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // Mail (`server.email`): SMTP replies line by line, over TLS when configured; one-time
                // tokens kept as SHA-256 hashes.
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Slow work off the task threads (bcrypt at /auth).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]
        ),
        .executableTarget(
            name: "realm-adapter-bench",
            dependencies: [
                "RealmAdapter",
                "RealmServer",
                "TestSupport",
                "PostgresConnector",
                "PostgresStore",
                "CLibPQ",
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // `serve`'s subscribers, SwiftNIO channels in the benchmark's process.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Benchmarks/realm-adapter-bench"
        ),
        // An instruction-level connector written only against the public Adapter API.
        .target(
            name: "JSONLinesMirror",
            dependencies: [
                "RealmAdapter",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "examples/jsonl-mirror/Sources/JSONLinesMirror"
        ),
        .executableTarget(
            name: "jsonl-mirror",
            dependencies: [
                "JSONLinesMirror",
                "RealmAdapter",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "examples/jsonl-mirror/Sources/jsonl-mirror"
        ),
        // An event handler: checks the coupons apps create and writes the verdict back.
        .target(
            name: "CouponVerifier",
            dependencies: ["RealmAdapter", .product(name: "Logging", package: "swift-log")],
            path: "examples/event-handler/Sources/CouponVerifier"
        ),
        .executableTarget(
            name: "coupon-verifier",
            dependencies: [
                "CouponVerifier", "RealmAdapter",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "examples/event-handler/Sources/coupon-verifier"
        ),
        // Writes transactions to a store from a separate process, for the multi-process tests.
        .executableTarget(
            name: "store-writer",
            dependencies: ["RealmAdapter"],
            path: "Tests/Support/store-writer"
        ),
        // What an attacker or a broken peer controls, as functions of bytes (scripts/fuzz.sh).
        .target(
            name: "FuzzTargets",
            dependencies: ["RealmAdapter", "PostgresConnector"],
            path: "Fuzz/Sources/FuzzTargets"
        ),
        // libFuzzer's driver when built with -sanitize=fuzzer; otherwise it replays input files.
        .executableTarget(
            name: "realm-adapter-fuzz",
            dependencies: ["FuzzTargets"],
            path: "Fuzz/Sources/realm-adapter-fuzz"
        ),
        // The core's sync scenarios, described once and run against every connector.
        .target(
            name: "ConnectorScenarios",
            dependencies: [
                "RealmAdapter",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/Support/ConnectorScenarios"
        ),
        // Helpers shared by the test targets (child processes).
        .target(
            name: "TestSupport",
            path: "Tests/Support/TestSupport"
        ),
        .testTarget(
            name: "RealmAdapterTests",
            // PostgresConnector only for its settings: configurations with a database section
            // are parsed with a connector registry (no server is involved).
            dependencies: [
                "RealmAdapter", "PostgresConnector", "store-writer", "TestSupport",
                // The store's suites run on both backends (the Postgres one when a server is up).
                "PostgresStore",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PostgresConnectorTests",
            dependencies: [
                "PostgresConnector", "RealmAdapter", "CLibPQ", "TestSupport", "FuzzTargets", "ConnectorScenarios",
                // The store's Postgres backend, tested against both engines (SQLite through GRDB).
                "PostgresStore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                // The crash and restart tests run the real daemon binary.
                "realm-adapter",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "SQLiteConnectorTests",
            dependencies: [
                "SQLiteConnector", "ConnectorScenarios", "RealmAdapter",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "examples/sqlite-connector/Tests/SQLiteConnectorTests"
        ),
        .testTarget(
            name: "SQLServerConnectorTests",
            dependencies: ["SQLServerConnector", "RealmAdapter", "ConnectorScenarios"]
        ),
        .testTarget(
            name: "JSONLinesMirrorTests",
            dependencies: ["JSONLinesMirror", "RealmAdapter"],
            path: "examples/jsonl-mirror/Tests/JSONLinesMirrorTests"
        ),
        .testTarget(
            name: "CouponVerifierTests",
            // The kill tests run the example's binary.
            dependencies: ["CouponVerifier", "RealmAdapter", "TestSupport", "coupon-verifier"],
            path: "examples/event-handler/Tests/CouponVerifierTests"
        ),
        .testTarget(
            name: "realm-adapterTests",
            dependencies: [
                "realm-adapter", "RealmServer", "RealmAdapter", "TestSupport",
                .product(name: "GraphQL", package: "GraphQL"),
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Zero compiler warnings in the project's own code, kept so: each warning is an error here (a
// package's warning settings do not reach the packages that depend on it). Test targets are
// left out: Swift Testing's macro expansions warn on their own in this toolchain.
for target in package.targets where target.type != .system && target.type != .test {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
}
