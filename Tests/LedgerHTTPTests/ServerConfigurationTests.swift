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

    @Test("bad listen addresses are configuration errors")
    func badConfiguration() {
        for text in ["8080", "host:", "host:70000", "::1:80", "[::1]80"] {
            #expect(throws: HTTPServerError.self, "\(text)") { try HTTPServerConfiguration.parseListenAddress(text) }
        }
    }
}
