import Testing
@testable import LedgerHTTP

@Suite("Requests: ids, percent-decoding and headers")
struct RequestTests {
    @Test("request ids are accepted only as short safe tokens")
    func requestIDs() {
        #expect(RequestID.sanitized("abc-DEF_1.2") == "abc-DEF_1.2")
        #expect(RequestID.sanitized(String(repeating: "a", count: 64)) != nil)
        #expect(RequestID.sanitized(String(repeating: "a", count: 65)) == nil)
        #expect(RequestID.sanitized("a b") == nil)
        #expect(RequestID.sanitized("") == nil)
        #expect(RequestID.sanitized("é") == nil)
        #expect(RequestID.generate().count == 32)
        #expect(RequestID.generate() != RequestID.generate())
    }

    @Test("percent-decoding tolerates malformed escapes")
    func percentDecoding() {
        #expect(PercentDecoding.decode("a%20b%2F") == "a b/")
        #expect(PercentDecoding.decode("100%") == "100%")
        #expect(PercentDecoding.decode("%zz%4") == "%zz%4")
        #expect(PercentDecoding.decode("%FF") == "\u{FFFD}")
    }

    @Test("headers are case-insensitive and repeated ones are joined")
    func requestHeaders() {
        let request = HTTPRequest(method: "GET", path: "/", queryItems: [("a", "1"), ("a", "2")],
                                  headers: ["X-One": "1", "Authorization": "Bearer t"])
        #expect(request.header("x-one") == "1")
        #expect(request.headers["authorization"] == "Bearer t")
        #expect(request.query["a"] == "1")
    }
}
