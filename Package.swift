// swift-tools-version:6.0
// Targets from the bottom up; imports only run downward, and every target names
// what it imports. README.md, *Layout*, is the map of this file.
import PackageDescription

let package = Package(
    name: "ledger",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ledger", targets: ["ledger"]),
        .executable(name: "ledger-bench", targets: ["ledger-bench"]),
    ],
    targets: [
        // C shims: one per Debian library, headers only.
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),

        // The pure core: events, exact money, JSON, the lifecycle reducer, provider adapters. No IO.
        .target(name: "LedgerCore", dependencies: ["CCrypto"]),

        // Structured logs and Prometheus metrics, for every layer above the core.
        .target(name: "LedgerObservability", dependencies: ["LedgerCore"]),

        // Adapters: each hides its C library completely.
        // Every SQL statement of the product: the client, the event log, the read models, the stores.
        .target(name: "LedgerPostgres", dependencies: ["CPostgres", "LedgerCore"]),
        // The HTTP server and nothing of the ledger's API.
        .target(name: "LedgerHTTP", dependencies: ["CMicroHTTPD", "LedgerCore", "LedgerObservability"]),

        // Use cases by capability (ingest, query, export, poll, tokens, maintenance): plain values in and out.
        .target(name: "LedgerService", dependencies: ["LedgerCore", "LedgerObservability", "LedgerPostgres"]),

        // The HTTP API: routes, the handler, problem+json, export responses, the served application.
        .target(name: "LedgerAPI", dependencies: ["LedgerCore", "LedgerObservability", "LedgerPostgres", "LedgerHTTP", "LedgerService"]),

        // Executables: `main` and one file per command (parse, call, print).
        // Both allocate through jemalloc (Debian's libjemalloc-dev): see docs/decisions.md, *Allocator*.
        .executableTarget(name: "ledger",
                          dependencies: ["LedgerCore", "LedgerObservability", "LedgerPostgres", "LedgerHTTP", "LedgerService", "LedgerAPI"],
                          linkerSettings: [.linkedLibrary("jemalloc")]),
        .executableTarget(name: "ledger-bench", dependencies: ["LedgerCore", "LedgerPostgres"],
                          linkerSettings: [.linkedLibrary("jemalloc")]),

        // Test support: fresh databases, scratch clusters, the HTTP test client, hostile input.
        .target(name: "LedgerTestSupport", dependencies: ["LedgerPostgres"], path: "Tests/LedgerTestSupport"),

        .testTarget(name: "LedgerCoreTests", dependencies: ["CCrypto", "LedgerCore"], exclude: ["Vectors"]),
        .testTarget(name: "LedgerPostgresTests", dependencies: ["LedgerCore", "LedgerPostgres", "LedgerTestSupport"]),
        .testTarget(name: "LedgerHTTPTests", dependencies: ["LedgerObservability", "LedgerHTTP", "LedgerTestSupport"]),
        .testTarget(name: "LedgerServiceTests",
                    dependencies: ["LedgerCore", "LedgerObservability", "LedgerPostgres", "LedgerHTTP", "LedgerService",
                                   "LedgerAPI", "ledger", "LedgerTestSupport"]),
    ]
)
