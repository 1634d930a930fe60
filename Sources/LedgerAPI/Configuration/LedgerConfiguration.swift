import Foundation
import LedgerHTTP
import LedgerService

/// Everything the ledger reads from its environment, as one value built in one place
/// (`fromEnvironment`) and passed down: the service's settings, the HTTP server's, and
/// the process's own. The defaults are the ones production runs with; docs/operations.md
/// lists every variable with its default.
public struct LedgerConfiguration: Sendable {
    public var service: ServiceConfiguration
    public var http: HTTPServerConfiguration
    /// How long `ledger serve` may take to stop after SIGTERM or SIGINT (the HTTP grace
    /// period and the writer's last commits included) before it exits anyway, with status 1.
    /// Nothing acknowledged is lost by that: a 2xx is sent only after its commit.
    public var shutdownTimeoutSeconds: Int = 25
    /// Where `Migrations/` is, when `LEDGER_MIGRATIONS` says (else it is looked for).
    public var migrationsDirectory: String?
    /// Where `API/openapi.json` is, when `LEDGER_OPENAPI` says (else it is looked for).
    public var openAPIPath: String?
    /// Where the console's folder is, when `LEDGER_CONSOLE` says (else it is looked for).
    public var consolePath: String?

    public init(service: ServiceConfiguration, http: HTTPServerConfiguration = Self.defaultHTTP) {
        self.service = service
        self.http = http
    }

    public var databaseURL: String { service.databaseURL }

    /// The HTTP server as `ledger serve` runs it. Handlers mostly wait for a group commit;
    /// more of them in flight make bigger batches (measured: 32 handlers commit about 17
    /// events at a time), so 128 workers. Reads run on the polling threads and wait there
    /// for PostgreSQL; on two cores four threads kept both busy best (measured: 2, 4, 8, 16).
    public static var defaultHTTP: HTTPServerConfiguration {
        var http = HTTPServerConfiguration()
        http.workerThreads = 128
        http.pollingThreads = 4
        return http
    }

    /// Reads the variables of operations.md; throws a `ConfigurationError` naming the bad one.
    /// Without `DATABASE_URL`, the private cluster `Ops/run` starts (`PrivateCluster`) is
    /// used, connecting as `role`.
    public static func fromEnvironment(_ env: [String: String], executablePath: String = "",
                                       role: PrivateCluster.Role = .owner) throws -> LedgerConfiguration {
        let reader = EnvironmentReader(env)
        let url: String
        if let given = reader.text("DATABASE_URL") {
            url = given
        } else if let found = PrivateCluster.defaultURL(stateDirectory: reader.text("LEDGER_STATE"),
                                                        executablePath: executablePath, role: role) {
            url = found
        } else {
            throw ConfigurationError.missing("DATABASE_URL", hint: "a libpq connection string or URI; without it the private cluster Ops/run starts (.ledger/port) is used, and none was found")
        }
        var service = ServiceConfiguration(databaseURL: url)
        service.web3APIKeys = reader.list("LEDGER_WEB3_API_KEYS")
        service.web3APIBase = reader.text("LEDGER_WEB3_API_BASE")
        // Trimmed as the lists are: a key pasted with a space or a line break around it.
        service.banxaAPIKey = reader.text("LEDGER_BANXA_API_KEY").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .flatMap { $0.isEmpty ? nil : $0 }
        service.banxaAPISecrets = reader.list("LEDGER_BANXA_API_SECRETS")
        service.signatureToleranceSeconds = Int64(try reader.integer("LEDGER_SIGNATURE_TOLERANCE", Int(service.signatureToleranceSeconds), 1...86_400))
        service.quarantineMaxBytes = Int64(try reader.integer("LEDGER_QUARANTINE_MAX_BYTES", Int(service.quarantineMaxBytes), 0...(1 << 44)))
        service.quarantinePerSourcePerMinute = try reader.integer("LEDGER_QUARANTINE_PER_SOURCE", service.quarantinePerSourcePerMinute, 1...1_000_000)
        service.orderStateCacheSize = try reader.integer("LEDGER_ORDER_STATE_CACHE", service.orderStateCacheSize, 0...1_000_000)
        service.writerNice = try reader.integer("LEDGER_WRITER_NICE", service.writerNice, -20...19)
        service.checkpoints = try checkpoints(reader)
        if let base = service.web3APIBase {
            // The poller's gateway: a URL it can reach, and a key for X-Pay-Api-Key.
            _ = try Web3Gateway(base: base, apiKey: "")
            if service.web3APIKeys.isEmpty {
                throw ConfigurationError.missing("LEDGER_WEB3_API_KEYS",
                                                 hint: "LEDGER_WEB3_API_BASE turns the poller on, and it sends the first key as X-Pay-Api-Key")
            }
        }

        var http = defaultHTTP
        if let listen = reader.text("LEDGER_LISTEN") {
            do {
                (http.host, http.port) = try HTTPServerConfiguration.parseListenAddress(listen)
            } catch {
                throw ConfigurationError.invalid("LEDGER_LISTEN", value: listen, hint: "address:port, for example 127.0.0.1:8080 or [::1]:8080")
            }
        }
        http.maxBodyBytes = try reader.integer("LEDGER_MAX_BODY", http.maxBodyBytes, 1...(64 << 20))
        http.workerThreads = try reader.integer("LEDGER_HTTP_WORKERS", http.workerThreads, 1...1024)
        http.pollingThreads = try reader.integer("LEDGER_HTTP_THREADS", http.pollingThreads, 1...256)
        http.connectionLimit = try reader.integer("LEDGER_HTTP_MAX_CONNECTIONS", http.connectionLimit, 1...1_000_000)
        http.perIPConnectionLimit = try reader.integer("LEDGER_HTTP_MAX_CONNECTIONS_PER_IP", http.perIPConnectionLimit, 0...1_000_000)
        http.idleTimeoutSeconds = try reader.integer("LEDGER_HTTP_IDLE_TIMEOUT", http.idleTimeoutSeconds, 1...86_400)
        http.requestTimeoutSeconds = Double(try reader.integer("LEDGER_REQUEST_TIMEOUT", Int(http.requestTimeoutSeconds), 1...3_600))
        http.headTimeoutSeconds = Double(try reader.integer("LEDGER_HTTP_HEAD_TIMEOUT", Int(http.headTimeoutSeconds), 1...3_600))
        http.bodyTimeoutSeconds = Double(try reader.integer("LEDGER_HTTP_BODY_TIMEOUT", Int(http.bodyTimeoutSeconds), 1...3_600))

        var configuration = LedgerConfiguration(service: service, http: http)
        configuration.shutdownTimeoutSeconds = try reader.integer("LEDGER_SHUTDOWN_TIMEOUT", configuration.shutdownTimeoutSeconds, 1...3_600)
        // The grace for requests in flight ends inside LEDGER_SHUTDOWN_TIMEOUT, leaving the
        // writer time to flush, so a stop with one slow request is not cut short.
        configuration.http.shutdownGraceSeconds = min(http.shutdownGraceSeconds, max(1, Double(configuration.shutdownTimeoutSeconds) - 5))
        configuration.migrationsDirectory = reader.text("LEDGER_MIGRATIONS")
        configuration.openAPIPath = reader.text("LEDGER_OPENAPI")
        configuration.consolePath = reader.text("LEDGER_CONSOLE")
        return configuration
    }

    /// The checkpoint variables alone, for commands that need no database (`ledger keys generate`).
    public static func checkpointsFromEnvironment(_ env: [String: String]) throws -> CheckpointConfiguration {
        try checkpoints(EnvironmentReader(env))
    }

    static func checkpoints(_ reader: EnvironmentReader) throws -> CheckpointConfiguration {
        var checkpoints = CheckpointConfiguration()
        checkpoints.keyPath = reader.text("LEDGER_CHECKPOINT_KEY")
        if let origin = reader.text("LEDGER_CHECKPOINT_ORIGIN") {
            if let problem = CheckpointConfiguration.problem(withOrigin: origin) {
                throw ConfigurationError.invalid("LEDGER_CHECKPOINT_ORIGIN", value: origin, hint: problem)
            }
            checkpoints.origin = origin
        }
        checkpoints.directory = reader.text("LEDGER_CHECKPOINT_DIR")
        checkpoints.intervalSeconds = try reader.integer("LEDGER_CHECKPOINT_INTERVAL", checkpoints.intervalSeconds, 1...31_622_400)
        return checkpoints
    }
}

/// Reads variables: an empty one counts as unset (the default), as for every variable.
struct EnvironmentReader {
    let env: [String: String]

    init(_ env: [String: String]) { self.env = env }

    func text(_ name: String) -> String? {
        guard let value = env[name], !value.isEmpty else { return nil }
        return value
    }

    func list(_ name: String) -> [String] {
        (text(name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func integer(_ name: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
        guard let text = text(name) else { return value }
        guard let n = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(n) else {
            throw ConfigurationError.invalid(name, value: text, hint: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }
}
