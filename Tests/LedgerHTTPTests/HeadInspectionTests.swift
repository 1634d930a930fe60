import Testing
@testable import LedgerHTTP

@Suite("Head inspection: hidden bytes and the head limits")
struct HeadInspectionTests {
    private func check(_ raw: [UInt8], visible: [Range<Int>]) -> Bool {
        raw.withUnsafeBytes { HeadInspection.hidesBytes(raw: $0, visible: visible) }
    }

    @Test("bytes outside every parsed string must be NUL, space or tab")
    func hiddenBytes() {
        // "GET\0/a\0HTTP/1.1\0\0" as libmicrohttpd leaves a clean request line.
        let clean = Array("GET".utf8) + [0] + Array("/a".utf8) + [0] + Array("HTTP/1.1".utf8) + [0, 0]
        #expect(!check(clean, visible: [0..<3, 4..<6, 7..<15]))
        // "/a<NUL>x": the target's string stops at the NUL, and "x" is left uncovered.
        let hidden = Array("GET".utf8) + [0] + Array("/a".utf8) + [0] + Array("x".utf8) + [0] + Array("HTTP/1.1".utf8) + [0, 0]
        #expect(check(hidden, visible: [0..<3, 4..<6, 9..<17]))
        // Blanks the parser skipped are not hidden content.
        let blanks = Array("Host".utf8) + [0, 32, 9] + Array("t".utf8) + [0, 0]
        #expect(!check(blanks, visible: [0..<4, 7..<8]))
        #expect(!check([], visible: []))
    }

    @Test("the head limits come first: a request line over the limit (414), then too many bytes, then too many fields (431)")
    func limits() {
        let raw = [UInt8](repeating: 97, count: 10)
        raw.withUnsafeBytes { buffer in
            #expect(HeadInspection.check(raw: buffer, visible: [0..<10], fieldCount: 1, maxHeadBytes: 9, maxFields: 5)
                    == .tooLarge(detail: "The request line and headers take 10 bytes; the limit is 9."))
            #expect(HeadInspection.check(raw: buffer, visible: [0..<10], fieldCount: 6, maxHeadBytes: 10, maxFields: 5)
                    == .tooLarge(detail: "The request has 6 header fields; the limit is 5."))
            #expect(HeadInspection.check(raw: buffer, visible: [0..<10], fieldCount: 5, maxHeadBytes: 10, maxFields: 5) == .fine)
            #expect(HeadInspection.check(raw: buffer, visible: [0..<10], fieldCount: 1, requestLineBytes: 10, maxHeadBytes: 9, maxFields: 5)
                    == .targetTooLong(detail: "The request line takes 10 bytes; the limit for the whole head is 9."))
        }
    }
}
