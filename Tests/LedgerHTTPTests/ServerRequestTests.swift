import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

extension ServerTests {
    @Suite("requests and answers")
    struct Requests {
        @Test("a GET goes through the worker pool and comes back with its query decoded")
        func getRoundtrip() throws {
            try withServer { _, port in
                let response = try HTTPClient(port: port).get("/v1/orders/A%2FB?limit=5&q=a%20b&flag&limit=9",
                                                              headers: [("X-Test", "hello"), ("X-Request-Id", "abc-123")])
                #expect(response.status == 200)
                #expect(response.header("X-Request-Id") == "abc-123")
                let text = response.text
                #expect(text.contains("method=GET"))
                #expect(text.contains("path=/v1/orders/A%2FB"))
                #expect(text.contains("query.limit=5"))
                #expect(text.contains("query.q=a b"))
                #expect(text.contains("query.flag="))
                #expect(text.contains("x-test=hello"))
                #expect(text.contains("remote=127.0.0.1"))
            }
        }

        @Test("a POST body arrives whole, and a keep-alive connection serves several requests")
        func postRoundtripKeepAlive() throws {
            try withServer { _, port in
                let connection = try TestConnection(port: port)
                for index in 0..<3 {
                    let body = "{\"n\":\(index)}"
                    try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                    let response = try connection.readResponse()
                    #expect(response.status == 200)
                    #expect(response.text.contains("body={\"n\":\(index)}"))
                    #expect(response.header("X-Request-Id")?.count == 32)
                }
            }
        }

        @Test("Expect: 100-continue gets 100 before the body, and 413 instead when the length is too large")
        func expectContinue() throws {
            try withServer { _, port in
                let connection = try TestConnection(port: port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
                let interim = try connection.readResponse()
                #expect(interim.status == 100)
                try connection.send("hello")
                let response = try connection.readResponse()
                #expect(response.status == 200)
                #expect(response.text.contains("body=hello"))

                let refused = try TestConnection(port: port)
                try refused.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: \(4 << 20)\r\n\r\n")
                let tooLarge = try refused.readResponse()
                #expect(tooLarge.status == 413)
            }
        }

        @Test("a chunked request body is reassembled")
        func chunkedBody() throws {
            try withServer { _, port in
                let response = try HTTPClient(port: port).exchange(
                    "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    + "5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n")
                #expect(response.status == 200)
                #expect(response.text.contains("body=hello, world"))
            }
        }

        @Test("a request id that is not a sane token is replaced")
        func requestIDs() throws {
            try withServer { _, port in
                let response = try HTTPClient(port: port).get("/", headers: [("X-Request-Id", "<script>")])
                let id = try #require(response.header("X-Request-Id"))
                #expect(id != "<script>")
                #expect(RequestID.sanitized(id) == id)
            }
        }

        @Test("HEAD and empty bodies are answered without a body")
        func emptyBodies() throws {
            try withServer(handler: { _ in HTTPResponse(status: 204) }) { _, port in
                let response = try HTTPClient(port: port).get("/")
                #expect(response.status == 204)
                let connection = try TestConnection(port: port)
                try connection.send("HEAD / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                let head = try connection.readResponse(toHEAD: true)
                #expect(head.status == 204)
            }
        }

        @Test("handler headers that could split the response are dropped")
        func headerInjection() throws {
            try withServer(handler: { _ in
                HTTPResponse(status: 200, headers: [("X-Evil", "a\r\nSet-Cookie: x=1"), ("X-Fine", "ok"), ("Content-Length", "99")],
                             body: .bytes(Array("hi".utf8)))
            }) { _, port in
                let response = try HTTPClient(port: port).get("/")
                #expect(response.status == 200)
                #expect(response.header("X-Evil") == nil)
                #expect(response.header("Set-Cookie") == nil)
                #expect(response.header("X-Fine") == "ok")
                #expect(response.text == "hi")
            }
        }

        @Test("the observer sees every request, layer rejections included, with status and duration")
        func observer() throws {
            let seen = Mutex<[HTTPExchange]>([])
            try withServer(observer: { exchange in seen.withLock { $0.append(exchange) } }) { _, port in
                _ = try HTTPClient(port: port).get("/one")
                _ = try HTTPClient(port: port).exchange("POST /two HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n")
                let deadline = Date(timeIntervalSinceNow: 2)
                while seen.withLock({ $0.count }) < 2 && Date() < deadline { usleep(10_000) }
            }
            let exchanges = seen.withLock { $0 }.sorted { $0.request.path < $1.request.path }
            #expect(exchanges.map(\.status) == [200, 400])
            #expect(exchanges.map(\.request.path) == ["/one", "/two"])
            #expect(exchanges.allSatisfy { $0.duration >= 0 && $0.duration < 2 && $0.request.body.isEmpty })
            #expect(exchanges.first?.request.remoteAddress == "127.0.0.1")
        }
    }
}
