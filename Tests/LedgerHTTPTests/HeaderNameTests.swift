import Testing
@testable import LedgerHTTP

@Suite("Header names")
struct HeaderNameTests {
    @Test("names are lowercased byte by byte when ASCII, as they are when already lowercase, by Unicode otherwise")
    func fieldNames() {
        #expect(HTTPRequest.fieldName("X-Pay-Signature") == "x-pay-signature")
        #expect(HTTPRequest.fieldName("content-type") == "content-type")
        #expect(HTTPRequest.fieldName("AUTHORIZATION-With-A-Long-Name-Beyond-Fifteen") == "authorization-with-a-long-name-beyond-fifteen")
        #expect(HTTPRequest.fieldName("X-Ünicode") == "x-ünicode")
        #expect(HTTPRequest.fieldName("") == "")
    }

    @Test("lookups ignore case, and repeated fields are joined")
    func lookups() {
        let request = HTTPRequest(method: "POST", path: "/", headers: ["X-Pay-Timestamp": "1", "Accept": "a"])
        #expect(request.header("x-pay-timestamp") == "1")
        #expect(request.header("X-PAY-TIMESTAMP") == "1")
        #expect(request.headers["accept"] == "a")
        let response = HTTPResponse(status: 200, headers: [("Retry-After", "2")])
        #expect(response.header("RETRY-AFTER") == "2")
    }
}
