import LedgerAPI
import LedgerHTTP
@testable import LedgerService
import Testing

/// `LedgerConfiguration.fromEnvironment` is the one place the environment is read.
@Suite("Configuration from the environment")
struct ConfigurationTests {
    static let base = ["DATABASE_URL": "postgresql:///ledger"]

    static func read(_ extra: [String: String]) throws -> LedgerConfiguration {
        try LedgerConfiguration.fromEnvironment(base.merging(extra) { $1 })
    }

    @Test("the environment overrides the defaults; ledger serve's defaults are the defaults")
    func environment() throws {
        let configuration = try Self.read(["LEDGER_LISTEN": "0.0.0.0:9090", "LEDGER_MAX_BODY": "2048", "LEDGER_HTTP_WORKERS": "4"])
        #expect(configuration.http.host == "0.0.0.0")
        #expect(configuration.http.port == 9090)
        #expect(configuration.http.maxBodyBytes == 2048)
        #expect(configuration.http.workerThreads == 4)
        let defaults = try Self.read([:])
        #expect(defaults.http.host == "127.0.0.1" && defaults.http.port == 8080)
        #expect(defaults.http.workerThreads == 128 && defaults.http.pollingThreads == 4)
        #expect(defaults.http.maxBodyBytes == 1 << 20)
        #expect(defaults.http.shutdownGraceSeconds == 20, "the grace ends inside LEDGER_SHUTDOWN_TIMEOUT (25 s) less 5 s")
        #expect(defaults.service.signatureToleranceSeconds == 300)
        // An empty variable keeps the default, as for every variable.
        let empty = try Self.read(["LEDGER_MAX_BODY": "", "LEDGER_HTTP_WORKERS": "", "LEDGER_LISTEN": ""])
        #expect(empty.http == defaults.http)
        #expect(throws: ConfigurationError.self) { try Self.read(["LEDGER_MAX_BODY": String(64 << 20 + 1)]) }
        #expect(throws: ConfigurationError.self) { try Self.read(["LEDGER_MAX_BODY": "lots"]) }
        #expect(throws: ConfigurationError.self) { try Self.read(["LEDGER_LISTEN": "host:70000"]) }
        #expect(try Self.read(["LEDGER_SHUTDOWN_TIMEOUT": "8"]).http.shutdownGraceSeconds == 3)
        // Keys are trimmed, as a key pasted with a space or a line break around it would never match.
        #expect(try Self.read(["LEDGER_BANXA_API_KEY": " banxa-key\n"]).service.banxaAPIKey == "banxa-key")
        #expect(try Self.read(["LEDGER_BANXA_API_KEY": " \n"]).service.banxaAPIKey == nil)
    }

    @Test("LEDGER_HTTP_HEAD_TIMEOUT and LEDGER_HTTP_BODY_TIMEOUT set the deadlines; nonsense is a configuration error")
    func deadlineEnvironment() throws {
        let configuration = try Self.read(["LEDGER_HTTP_HEAD_TIMEOUT": "7", "LEDGER_HTTP_BODY_TIMEOUT": "45"])
        #expect(configuration.http.headTimeoutSeconds == 7)
        #expect(configuration.http.bodyTimeoutSeconds == 45)
        #expect(HTTPServerConfiguration().headTimeoutSeconds == 10)
        for bad in ["0", "-1", "ten", "3601"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try Self.read(["LEDGER_HTTP_HEAD_TIMEOUT": bad]) }
        }
    }

    @Test("LEDGER_MIGRATIONS and LEDGER_OPENAPI are read with the rest")
    func paths() throws {
        let configuration = try Self.read(["LEDGER_MIGRATIONS": "/m", "LEDGER_OPENAPI": "/o.json"])
        #expect(configuration.migrationsDirectory == "/m" && configuration.openAPIPath == "/o.json")
        let defaults = try Self.read([:])
        #expect(defaults.migrationsDirectory == nil && defaults.openAPIPath == nil)
    }
}
