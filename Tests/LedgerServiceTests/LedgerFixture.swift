import Foundation
@testable import LedgerAPI
import LedgerCore
import LedgerHTTP
import LedgerObservability
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport

/// A real ledger service on loopback over a fresh, migrated database: the
/// thing a merchant backend, a provider and support staff talk to.
final class LedgerFixture: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init.
    static let web3Keys = ["key-old", "key-new"]
    static let banxaAPIKey = "bk"
    static let banxaSecret = "bs1"

    let databaseURL: String
    let app: LedgerApplication
    let port: Int
    let client: HTTPClient
    /// A token of each staff role, made directly in the database.
    let ingest: String
    let support: String
    let auditor: String
    let accountant: String

    /// The database this fixture made, dropped when the fixture goes away.
    private let owned: TestDatabase?

    /// `keepDatabase`: leave the database after the suite, for Ops/test to verify once
    /// every test has run (it checks each `ledger_test_hostile_*` database, then drops it).
    static func start(_ label: String, poolSize: Int = 4, migrator: Migrator? = nil, logger: Logger = .disabled,
                      keepDatabase: Bool = false,
                      configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> LedgerFixture {
        let db = try TestDatabase.create(label)
        do {
            return try LedgerFixture(databaseURL: db.url, owning: keepDatabase ? nil : db, poolSize: poolSize, migrator: migrator,
                                     logger: logger, configure: configure)
        } catch {
            drop(db)
            throw error
        }
    }

    init(databaseURL: String, owning owned: TestDatabase? = nil, poolSize: Int = 4, migrator: Migrator? = nil,
         logger: Logger = .disabled, configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        self.databaseURL = databaseURL
        self.owned = owned
        var configuration = try LedgerConfiguration.fromEnvironment(Self.environment(databaseURL: databaseURL))
        // The server's own defaults, smaller than `ledger serve`'s, with the ledger's body limit.
        var http = HTTPServerConfiguration()
        http.maxBodyBytes = configuration.http.maxBodyBytes
        http.port = 0
        http.workerThreads = 8
        http.requestTimeoutSeconds = 10
        http.shutdownGraceSeconds = 10
        configure(&http)
        configuration.http = http
        let c = try PostgresConnection(connectionString: databaseURL)
        defer { c.close() }
        let issuer = TokenIssuer()
        ingest = try issuer.create(role: .ingest, name: "merchant-backend", expiresAt: nil, on: c)
        support = try issuer.create(role: .support, name: "support-desk", expiresAt: nil, on: c)
        auditor = try issuer.create(role: .auditor, name: "auditor-ann", expiresAt: nil, on: c)
        accountant = try issuer.create(role: .accountant, name: "accounts", expiresAt: nil, on: c)
        app = LedgerApplication(configuration: configuration, logger: logger, migrator: migrator,
                                openAPIDocument: try Self.openAPIDocument(), console: try? Self.consoleFiles(), poolSize: poolSize)
        port = try app.start()
        client = HTTPClient(port: port)
    }

    /// API/openapi.json of this checkout, as `ledger serve` loads it.
    static func openAPIDocument() throws -> OpenAPIDocument {
        try OpenAPIDocument.load(path: openAPIPath)
    }

    /// Console/ of this checkout, as `ledger serve` loads it.
    static func consoleFiles() throws -> ConsoleFiles {
        try ConsoleFiles.load(folder: URL(fileURLWithPath: TestDatabase.migrationsDirectory)
            .deletingLastPathComponent().appendingPathComponent(ConsoleFiles.relativePath).path)
    }

    static let openAPIPath = URL(fileURLWithPath: TestDatabase.migrationsDirectory)
        .deletingLastPathComponent().appendingPathComponent(OpenAPIDocument.relativePath).path

    static func environment(databaseURL: String) -> [String: String] {
        ["DATABASE_URL": databaseURL,
         "LEDGER_WEB3_API_KEYS": web3Keys.joined(separator: ","),
         "LEDGER_BANXA_API_KEY": banxaAPIKey,
         "LEDGER_BANXA_API_SECRETS": banxaSecret]
    }

    /// Stops the service (idempotent). The database stays readable until the fixture is released.
    func stop() { app.stop() }

    deinit {
        app.stop()
        if let owned { Self.drop(owned) }
    }

    /// Drops a test database (best effort): each run would otherwise leave ~100 behind.
    static func drop(_ db: TestDatabase) {
        guard let admin = try? PostgresConnection(connectionString: db.adminURL) else { return }
        defer { admin.close() }
        _ = try? admin.query("DROP DATABASE IF EXISTS \(db.name) WITH (FORCE)")   // name is ours: [a-z0-9_]
    }

    // MARK: database

    func connect() throws -> PostgresConnection { try PostgresConnection(connectionString: databaseURL) }

    func query(_ sql: String, _ parameters: [SQLValue] = []) throws -> QueryResult {
        let c = try connect()
        defer { c.close() }
        return try c.query(sql, parameters)
    }

    func count(_ sql: String, _ parameters: [SQLValue] = []) throws -> Int64 {
        try query(sql, parameters).int64(0, "n")
    }

    /// Events stored under a webhook body's idempotency key ("web3:" + hex SHA-256 of the raw body).
    func storedCount(web3Body body: [UInt8]) throws -> Int64 {
        try count("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = $1", [.text(Self.web3Key(body))])
    }

    static func web3Key(_ body: [UInt8]) -> String { "web3:" + Hex.encode(Crypto.sha256(body)) }

    /// A fresh token of `role`, optionally scoped to an order and expiring.
    func token(_ role: Role, orderNo: String? = nil, enrollmentRef: String? = nil, expiresAt: Timestamp? = nil) throws -> String {
        try namedToken(role, orderNo: orderNo, enrollmentRef: enrollmentRef, expiresAt: expiresAt).token
    }

    func namedToken(_ role: Role, orderNo: String? = nil, enrollmentRef: String? = nil,
                    expiresAt: Timestamp? = nil) throws -> (name: String, token: String) {
        let c = try connect()
        defer { c.close() }
        let name = "\(role.rawValue)-\(UInt32.random(in: 0...UInt32.max))"
        // Client tokens always expire (the tokens table insists); an hour, like minted ones.
        let expiry = expiresAt ?? (role == .client ? Timestamp(seconds: Timestamp.now().seconds + 3600) : nil)
        return (name, try TokenIssuer().create(role: role, name: name, orderNo: orderNo, enrollmentRef: enrollmentRef,
                                               expiresAt: expiry, on: c))
    }

    func revoke(_ name: String) throws {
        let c = try connect()
        defer { c.close() }
        try TokenStore().revoke(name: name, on: c)
    }

    /// What `ledger verify` checks: the hash chain, and every read model against a
    /// replay of its events. Empty when all is well.
    static func verify(databaseURL: String) throws -> [String] {
        let c = try PostgresConnection(connectionString: databaseURL)
        defer { c.close() }
        var found: [String] = []
        let report = try Verification().run(on: c, each: { found.append($0.text) })
        if case .broken(let position, let reason) = report.chain { return ["hash chain broken at \(position): \(reason)"] }
        return found
    }

    func verify() throws -> [String] { try Self.verify(databaseURL: databaseURL) }

    // MARK: web3 webhooks

    static func web3Body(_ no: String, status: Int, amount: String = "40", extra: String = "") -> [UInt8] {
        Array(#"{"merchantOrderNo":"\#(no)","orderNo":"GW-\#(no)","status":\#(status),"statusText":"s\#(status)","amount":"\#(amount)","chainId":"56","tokenId":"usdt"\#(extra)}"#.utf8)
    }

    static func web3Headers(_ body: [UInt8], timestamp: String, key: String = "key-new") -> [(String, String)] {
        [("X-Pay-Timestamp", timestamp), ("X-Pay-Signature", Web3Webhook.signature(key: key, timestamp: timestamp, body: body))]
    }

    /// Posts a web3 webhook signed with `key` at `timestamp` (Unix seconds; now by default).
    func sendWeb3(_ body: [UInt8], timestamp: Int64? = nil, key: String = "key-new") throws -> Reply {
        let ts = String(timestamp ?? Timestamp.now().seconds)
        return try client.post("/v1/webhooks/web3", body: body, headers: Self.web3Headers(body, timestamp: ts, key: key))
    }

    // MARK: merchant API

    func register(_ no: String, amount: String = "40", extra: String = "") throws -> Reply {
        try client.post("/v1/orders", token: ingest,
                        json: #"{"merchantOrderNo":"\#(no)","provider":"web3","amount":"\#(amount)","asset":"USDT","chainId":"56","tokenId":"usdt"\#(extra)}"#)
    }

    func order(_ no: String, token: String? = nil) throws -> Reply {
        try client.get("/v1/orders/\(no)", token: token ?? support)
    }

    // MARK: metrics

    /// The value of one Prometheus sample, e.g. `ledger_rejected_deliveries_total{reason="bad_signature"}`; 0 when absent.
    func metric(_ sample: String) throws -> Double {
        let text = try client.get("/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1)) ?? .nan
        }
        return 0
    }
}

/// Runs `body(i)` for i in 0..<count, each on its own thread, and waits for all.
/// (Dedicated threads, not the 2-thread cooperative pool of a 2-core machine.)
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            body(i)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// A lock-protected value for collecting results from several threads.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func with<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var snapshot: Value { with { $0 } }
}

/// Bounded polling: true as soon as `condition` holds, false after `seconds`.
func eventually(within seconds: Double, every interval: Double = 0.1, _ condition: () throws -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    repeat {
        if (try? condition()) == true { return true }
        Thread.sleep(forTimeInterval: interval)
    } while Date() < deadline
    return false
}

/// The same for async tests: sleeps without holding one of the few cooperative threads.
func eventually(within seconds: Double, every interval: Double = 0.1, _ condition: () throws -> Bool) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    repeat {
        if (try? condition()) == true { return true }
        try? await Task.sleep(nanoseconds: UInt64(interval * 1e9))
    } while Date() < deadline
    return false
}

extension JSONValue {
    /// This object without the named keys (for comparing read models of different orders).
    func removing(_ keys: Set<String>) -> JSONValue {
        switch self {
        case .object(let fields): return .object(fields.filter { !keys.contains($0.0) }.map { ($0.0, $0.1.removing(keys)) })
        case .array(let items): return .array(items.map { $0.removing(keys) })
        default: return self
        }
    }
}
