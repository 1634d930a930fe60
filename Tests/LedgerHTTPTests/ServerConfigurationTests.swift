import Testing
@testable import LedgerHTTP

@Suite("Server configuration")
struct ServerConfigurationTests {
    @Test("listen addresses parse host and port", arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080),
        ("[::1]:0", "::1", 0),
        (":9000", "0.0.0.0", 9000),
        ("localhost:1", "localhost", 1),
    ])
    func listenAddresses(text: String, host: String, port: Int) throws {
        let parsed = try HTTPServerConfiguration.parseListenAddress(text)
        #expect(parsed.host == host)
        #expect(parsed.port == port)
    }

    @Test("bad listen addresses and numbers are configuration errors")
    func badConfiguration() {
        for text in ["8080", "host:", "host:70000", "::1:80", "[::1]80"] {
            #expect(throws: HTTPServerError.self, "\(text)") { try HTTPServerConfiguration.parseListenAddress(text) }
        }
        #expect(throws: HTTPServerError.self) {
            try HTTPServerConfiguration.fromEnvironment(["LEDGER_MAX_BODY": "lots"])
        }
    }

    @Test("the environment overrides the defaults")
    func environment() throws {
        let configuration = try HTTPServerConfiguration.fromEnvironment([
            "LEDGER_LISTEN": "0.0.0.0:9090", "LEDGER_MAX_BODY": "2048", "LEDGER_HTTP_WORKERS": "4",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9090)
        #expect(configuration.maxBodyBytes == 2048)
        #expect(configuration.workerThreads == 4)
        #expect(try HTTPServerConfiguration.fromEnvironment([:]) == HTTPServerConfiguration())
        // An empty variable keeps the default, as LedgerConfiguration reads it for every command.
        #expect(try HTTPServerConfiguration.fromEnvironment(["LEDGER_MAX_BODY": "", "LEDGER_HTTP_WORKERS": "", "LEDGER_LISTEN": ""])
                == HTTPServerConfiguration())
        #expect(throws: HTTPServerError.self) {
            try HTTPServerConfiguration.fromEnvironment(["LEDGER_MAX_BODY": String(64 << 20 + 1)])
        }
    }

    @Test("LEDGER_HTTP_HEAD_TIMEOUT and LEDGER_HTTP_BODY_TIMEOUT set the deadlines; nonsense is a configuration error")
    func deadlineEnvironment() throws {
        let configuration = try HTTPServerConfiguration.fromEnvironment(["LEDGER_HTTP_HEAD_TIMEOUT": "7", "LEDGER_HTTP_BODY_TIMEOUT": "45"])
        #expect(configuration.headTimeoutSeconds == 7)
        #expect(configuration.bodyTimeoutSeconds == 45)
        #expect(HTTPServerConfiguration().headTimeoutSeconds == 10)
        for bad in ["0", "-1", "ten", "3601"] {
            #expect(throws: HTTPServerError.self, "\(bad)") { try HTTPServerConfiguration.fromEnvironment(["LEDGER_HTTP_HEAD_TIMEOUT": bad]) }
        }
    }
}
