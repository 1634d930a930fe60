// swift-tools-version:6.0
// Targets from the bottom up: C shims, the pure core, the two IO adapters
// (PostgreSQL, HTTP), the service that wires use cases, and the executables.
// Imports only run downward.
import PackageDescription

let package = Package(
    name: "ledger",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ledger", targets: ["ledger"]),
        .executable(name: "ledger-bench", targets: ["ledger-bench"]),
    ],
    targets: [
        // C shims: one per Debian library, nothing else in them.
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),

        // Pure core: events, decimal money, the lifecycle reducer, provider adapters. No IO.
        .target(name: "LedgerCore", dependencies: ["CCrypto"]),

        // Adapters: each hides its C library completely.
        .target(name: "LedgerPostgres", dependencies: ["CPostgres", "LedgerCore"]),
        .target(name: "LedgerHTTP", dependencies: ["CMicroHTTPD"]),

        // Use cases (ingest, query, tokens, poll) wired from the layers below.
        .target(name: "LedgerService", dependencies: ["LedgerCore", "LedgerPostgres", "LedgerHTTP"]),

        // Executables: argument parsing and nothing more.
        // Both executables allocate through jemalloc (Debian's libjemalloc-dev): see README, *Allocator*.
        .executableTarget(name: "ledger", dependencies: ["LedgerService"], linkerSettings: [.linkedLibrary("jemalloc")]),
        .executableTarget(name: "ledger-bench", dependencies: ["LedgerService"], linkerSettings: [.linkedLibrary("jemalloc")]),

        // Test support: fresh databases and scratch PostgreSQL clusters for fault tests.
        .target(name: "LedgerTestSupport", dependencies: ["LedgerPostgres"], path: "Tests/LedgerTestSupport"),

        .testTarget(name: "LedgerCoreTests", dependencies: ["LedgerCore"]),
        .testTarget(name: "LedgerPostgresTests", dependencies: ["LedgerPostgres", "LedgerTestSupport"]),
        .testTarget(name: "LedgerHTTPTests", dependencies: ["LedgerHTTP", "LedgerTestSupport"]),
        .testTarget(name: "LedgerServiceTests", dependencies: ["LedgerService", "LedgerTestSupport"]),
    ]
)
