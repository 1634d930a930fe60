import Testing
@testable import LedgerHTTP

@Suite("Framing guard")
struct FramingGuardTests {
    func check(_ headers: [(String, String)], version: String = "HTTP/1.1", max: Int = 100) -> FramingGuard.Verdict {
        FramingGuard.check(headers: headers, version: version, maxBodyBytes: max)
    }

    @Test("plain framing is accepted")
    func accepted() {
        #expect(check([]) == .accept(contentLength: nil, chunked: false))
        #expect(check([("Content-Length", "10")]) == .accept(contentLength: 10, chunked: false))
        #expect(check([("transfer-encoding", "Chunked")]) == .accept(contentLength: nil, chunked: true))
    }

    @Test("ambiguous framing is a 400", arguments: [
        [("Transfer-Encoding", "chunked"), ("Content-Length", "3")],
        [("Content-Length", "3"), ("Content-Length", "4")],
        [("Content-Length", "3"), ("content-length", "3")],
        [("Transfer-Encoding", "gzip")],
        [("Transfer-Encoding", "gzip, chunked")],
        [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")],
        [("Transfer-Encoding ", "chunked")],
        [("Content-Length", "1e3")],
        [("Content-Length", "")],
        [("Content-Length", "99999999999999999999999")],
    ])
    func rejected(headers: [(String, String)]) {
        guard case .reject(let status, _, _) = check(headers) else {
            Issue.record("accepted \(headers)")
            return
        }
        #expect(status == 400)
    }

    @Test("chunked on HTTP/1.0 is a 400, and a declared length over the limit is a 413")
    func versionAndSize() {
        if case .reject(let status, _, _) = check([("Transfer-Encoding", "chunked")], version: "HTTP/1.0") {
            #expect(status == 400)
        } else { Issue.record("accepted chunked HTTP/1.0") }
        if case .reject(let status, _, _) = check([("Content-Length", "101")]) {
            #expect(status == 413)
        } else { Issue.record("accepted an oversized length") }
        #expect(check([("Content-Length", "100")]) == .accept(contentLength: 100, chunked: false))
    }
}
