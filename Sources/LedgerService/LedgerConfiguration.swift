import Foundation
import LedgerPostgres

/// Everything the service reads from its environment, as one value built in
/// one place and passed down. Secrets live here and nowhere near the logger.
public struct LedgerConfiguration: Sendable {
    public var databaseURL: String
    public var listenHost: String
    public var listenPort: Int
    public var web3APIKeys: [String]
    public var web3APIBase: String?
    public var banxaAPIKey: String?
    public var banxaAPISecrets: [String]
    public var signatureToleranceSeconds: Int64
    public var maxBodyBytes: Int
    /// How large ledger.quarantine may grow (table, indexes and TOAST) before
    /// further rejected deliveries are only counted, not kept.
    public var quarantineMaxBytes: Int64 = Self.defaultQuarantineMaxBytes
    public static let defaultQuarantineMaxBytes: Int64 = 1 << 30
    /// How many rejected deliveries a minute one remote address may have kept
    /// (a burst of that many, then that rate); the rest are only counted.
    public var quarantinePerSourcePerMinute: Int = Self.defaultQuarantinePerSourcePerMinute
    public static let defaultQuarantinePerSourcePerMinute = 600
    /// How many orders' states the writer keeps from its last commits (`OrderStateCache`),
    /// so their next events need no load; 0 (the default) turns it off. It pays only when
    /// it holds the orders that are active, keeps states only while batches touch existing
    /// orders, and holds at most about 16 MB of them (docs/decisions.md).
    public var orderStateCacheSize: Int = Self.defaultOrderStateCacheSize
    public static let defaultOrderStateCacheSize = 0

    /// The nice value the single writer thread asks for (`WriterPriority`; 0 leaves it alone).
    public var writerNice: Int = Self.defaultWriterNice
    public static let defaultWriterNice = -10

    /// How long `ledger serve` may take to stop after SIGTERM or SIGINT (the HTTP grace
    /// period and the writer's last commits included) before it exits anyway, with status 1.
    /// Nothing acknowledged is lost by that: a 2xx is sent only after its commit.
    public var shutdownTimeoutSeconds: Int = Self.defaultShutdownTimeoutSeconds
    public static let defaultShutdownTimeoutSeconds = 25

    public var database: DatabaseConfiguration { DatabaseConfiguration(connectionString: databaseURL) }

    /// Reads the variables of operations.md; throws a `ConfigurationError` naming the bad one.
    public static func fromEnvironment(_ env: [String: String]) throws -> LedgerConfiguration {
        guard let url = env["DATABASE_URL"], !url.isEmpty else {
            throw ConfigurationError.missing("DATABASE_URL", hint: "a libpq connection string or URI; without it the private cluster Ops/run starts (.ledger/port) is used, and none was found")
        }
        let listen = env["LEDGER_LISTEN"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1:8080"
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
              (0...65535).contains(port) else {
            throw ConfigurationError.invalid("LEDGER_LISTEN", value: listen, hint: "address:port, for example 127.0.0.1:8080")
        }
        let tolerance = try integer(env, "LEDGER_SIGNATURE_TOLERANCE", default: 300, range: 1...86_400)
        let maxBody = try integer(env, "LEDGER_MAX_BODY", default: 1_048_576, range: 1...(64 << 20))
        let quarantineMax = try integer(env, "LEDGER_QUARANTINE_MAX_BYTES", default: Int(defaultQuarantineMaxBytes),
                                        range: 0...(1 << 44))
        let perSource = try integer(env, "LEDGER_QUARANTINE_PER_SOURCE", default: defaultQuarantinePerSourcePerMinute,
                                    range: 1...1_000_000)
        let stateCache = try integer(env, "LEDGER_ORDER_STATE_CACHE", default: defaultOrderStateCacheSize,
                                     range: 0...1_000_000)
        let writerNice = try integer(env, "LEDGER_WRITER_NICE", default: defaultWriterNice, range: -20...19)
        let shutdownTimeout = try integer(env, "LEDGER_SHUTDOWN_TIMEOUT", default: defaultShutdownTimeoutSeconds,
                                          range: 1...3_600)
        var configuration = LedgerConfiguration(
            databaseURL: url,
            listenHost: String(listen[..<colon]),
            listenPort: port,
            web3APIKeys: list(env["LEDGER_WEB3_API_KEYS"]),
            web3APIBase: env["LEDGER_WEB3_API_BASE"].flatMap { $0.isEmpty ? nil : $0 },
            banxaAPIKey: env["LEDGER_BANXA_API_KEY"].flatMap { $0.isEmpty ? nil : $0 },
            banxaAPISecrets: list(env["LEDGER_BANXA_API_SECRETS"]),
            signatureToleranceSeconds: Int64(tolerance),
            maxBodyBytes: maxBody)
        configuration.quarantineMaxBytes = Int64(quarantineMax)
        configuration.quarantinePerSourcePerMinute = perSource
        configuration.orderStateCacheSize = stateCache
        configuration.writerNice = writerNice
        configuration.shutdownTimeoutSeconds = shutdownTimeout
        if let base = configuration.web3APIBase {
            // The poller's gateway: a URL it can reach, and a key for X-Pay-Api-Key.
            _ = try Web3Gateway(base: base, apiKey: "")
            if configuration.web3APIKeys.isEmpty {
                throw ConfigurationError.missing("LEDGER_WEB3_API_KEYS",
                                                 hint: "LEDGER_WEB3_API_BASE turns the poller on, and it sends the first key as X-Pay-Api-Key")
            }
        }
        return configuration
    }

    private static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func integer(_ env: [String: String], _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = env[name], !text.isEmpty else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw ConfigurationError.invalid(name, value: text, hint: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }
}

/// A configuration mistake, named so the operator can fix it.
public enum ConfigurationError: Error, CustomStringConvertible {
    case missing(String, hint: String)
    case invalid(String, value: String, hint: String)

    public var description: String {
        switch self {
        case .missing(let name, let hint): return "\(name) is not set: \(hint)"
        case .invalid(let name, let value, let hint): return "\(name)=\(value) is not valid: \(hint)"
        }
    }
}
