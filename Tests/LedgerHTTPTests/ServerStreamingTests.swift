import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

extension ServerTests {
    @Suite("streamed bodies")
    struct Streaming {
        @Test("a streamed body is sent chunked, in order, to the end")
        func streaming() throws {
            let handler: HTTPServer.Handler = { _ in
                let counter = Atomic<Int>(0)
                return HTTPResponse(status: 200, headers: [("Content-Type", "text/csv")], body: .stream({
                    let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard index < 200 else { return nil }
                    if index % 50 == 0 { usleep(20_000) }
                    return Array("line \(index)\n".utf8) + [UInt8](repeating: 46, count: 4000) + [10]
                }))
            }
            try withServer(handler: handler) { _, port in
                let response = try HTTPClient(port: port).get("/export")
                #expect(response.status == 200)
                #expect(response.header("Transfer-Encoding")?.lowercased() == "chunked")
                let lines = response.text.split(separator: "\n").filter { $0.hasPrefix("line ") }
                #expect(lines.count == 200)
                #expect(lines.first == "line 0")
                #expect(lines.last == "line 199")
            }
        }

        @Test("a stream that fails midway aborts the connection instead of ending cleanly")
        func streamingFailure() throws {
            struct Broken: Error {}
            let handler: HTTPServer.Handler = { _ in
                let counter = Atomic<Int>(0)
                return HTTPResponse(status: 200, body: .stream({
                    if counter.wrappingAdd(1, ordering: .relaxed).oldValue == 3 { throw Broken() }
                    return Array("row\n".utf8)
                }))
            }
            try withServer(handler: handler) { _, port in
                #expect(throws: ClientError.self) { _ = try HTTPClient(port: port).get("/export") }
            }
        }

        @Test("an inline handler's streamed body is still produced on a worker and sent to the end")
        func inlineStreaming() throws {
            let handler: HTTPServer.Handler = { _ in
                let counter = Atomic<Int>(0)
                return HTTPResponse(status: 200, body: .stream({
                    let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard index < 100 else { return nil }
                    return Array("line \(index) \(threadName())\n".utf8) + [UInt8](repeating: 46, count: 3000) + [10]
                }))
            }
            try withServer(runsInline: { _ in true }, handler: handler) { _, port in
                let response = try HTTPClient(port: port).get("/export")
                #expect(response.status == 200)
                let lines = response.text.split(separator: "\n").filter { $0.hasPrefix("line ") }
                #expect(lines.count == 100)
                #expect(lines.allSatisfy { !$0.contains("MHD-") })
            }
        }
    }
}
