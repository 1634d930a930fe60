import Testing
@testable import LedgerHTTP

@Suite("Responses")
struct ResponseTests {
    @Test("problem+json escapes what it is given")
    func problemEscaping() {
        let response = HTTPResponse.problem(status: 400, title: "Bad \"input\"", detail: "line\nbreak \\ tab\t\u{1} ok")
        let text = String(decoding: response.bodyBytes ?? [], as: UTF8.self)
        #expect(text == #"{"type":"about:blank","title":"Bad \"input\"","status":400,"detail":"line\nbreak \\ tab\t\u0001 ok"}"#)
        #expect(response.header("content-type") == "application/problem+json")
    }

    @Test("json() sets the content type and keeps the bytes")
    func json() {
        let response = HTTPResponse.json(201, Array("{}".utf8), headers: [("Location", "/x")])
        #expect(response.status == 201)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Location") == "/x")
        #expect(response.bodyBytes == Array("{}".utf8))
    }
}
