import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

extension ServerTests {
    @Suite("requests run on a polling thread")
    struct InlineRouting {
        @Test("requests the predicate picks run on a polling thread; the rest are handed to a worker")
        func inlineAndSuspendedRouting() throws {
            // libmicrohttpd names its polling threads "MHD-worker"; our workers are not.
            let handler: HTTPServer.Handler = { request in
                HTTPResponse.text(200, "thread=\(threadName())")
            }
            let seen = Mutex<[HTTPExchange]>([])
            try withServer({ $0.pollingThreads = 2 }, observer: { exchange in seen.withLock { $0.append(exchange) } },
                           runsInline: { $0.method == "GET" && $0.path.hasPrefix("/fast/") }, handler: handler) { _, port in
                let connection = try TestConnection(port: port)
                for round in 0..<3 {
                    try connection.send("GET /fast/\(round) HTTP/1.1\r\nHost: t\r\n\r\n")
                    let fast = try connection.readResponse()
                    #expect(fast.status == 200)
                    #expect(fast.text.hasPrefix("thread=MHD-"), "\(fast.text)")
                    #expect(fast.header("X-Request-Id")?.count == 32)
                    try connection.send("POST /fast/\(round) HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
                    let slow = try connection.readResponse()
                    #expect(slow.status == 200)
                    #expect(!slow.text.hasPrefix("thread=MHD-"), "\(slow.text)")
                }
                #expect(!(try HTTPClient(port: port).get("/other").text.hasPrefix("thread=MHD-")))
            }
            let exchanges = seen.withLock { $0 }
            #expect(exchanges.count == 7)
            #expect(exchanges.allSatisfy { $0.status == 200 && $0.completed })
            #expect(exchanges.filter { $0.request.path.hasPrefix("/fast/") }.count == 6)
        }

        @Test("framing guard, body limit and header limit still apply to requests that would run inline")
        func inlineKeepsLayerLimits() throws {
            try withServer({ $0.maxBodyBytes = 16; $0.connectionMemoryLimit = 8192 }, runsInline: { _ in true }) { _, port in
                let tooLarge = try TestConnection(port: port)
                try tooLarge.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n")
                #expect(try tooLarge.readResponse().status == 413)
                let smuggled = try TestConnection(port: port)
                try smuggled.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
                #expect(try smuggled.readResponse().status == 400)
                let huge = try TestConnection(port: port)
                try huge.send("GET /x HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n")
                #expect(try huge.readResponse().status == 431)
                #expect(try HTTPClient(port: port).get("/fine").status == 200)
            }
        }
    }
}
