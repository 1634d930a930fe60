import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

/// The calling thread's name as the kernel knows it (libmicrohttpd names its own threads).
private func threadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Echoes what the server decoded, one "key=value" line each, so tests can check parsing.
private let echo: HTTPServer.Handler = { request in
    var lines = [
        "method=\(request.method)",
        "path=\(request.path)",
        "remote=\(request.remoteAddress)",
        "bytes=\(request.body.count)",
    ]
    for (name, value) in request.query.sorted(by: { $0.key < $1.key }) { lines.append("query.\(name)=\(value)") }
    if let header = request.header("x-test") { lines.append("x-test=\(header)") }
    lines.append("body=" + String(decoding: request.body, as: UTF8.self))
    return HTTPResponse.text(200, lines.joined(separator: "\n"))
}

private func withServer<T>(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    observer: (@Sendable (HTTPExchange) -> Void)? = nil,
    runsInline: (@Sendable (HTTPRequest) -> Bool)? = nil,
    handler: @escaping HTTPServer.Handler = echo,
    _ body: (HTTPServer, Int) throws -> T
) throws -> T {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.workerThreads = 8
    configuration.shutdownGraceSeconds = 5
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, observer: observer, runsInline: runsInline, handler: handler)
    let port = try server.start()
    defer { server.stop() }
    return try body(server, port)
}

@Suite("HTTP server over loopback", .serialized)
struct ServerTests {
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

    @Test("a 2 MiB body with Content-Length gets 413 problem+json before it is read")
    func bodyTooLargeByLength() throws {
        try withServer { _, port in
            let connection = try TestConnection(port: port)
            try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(2 << 20)\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 413)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.text.contains("\"status\":413"))
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(connection.closesWithin(2))
        }
    }

    @Test("a 2 MiB body sent in full gets 413 problem+json")
    func bodyTooLargeSent() throws {
        try withServer { _, port in
            let connection = try TestConnection(port: port)
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)
            try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n")
            // The server may close while we are still writing; that is its right.
            try? connection.send(body)
            let response = try connection.readResponse()
            #expect(response.status == 413)
            #expect(response.header("Content-Type") == "application/problem+json")
        }
    }

    @Test("a chunked body that grows past the limit gets 413 without being buffered")
    func chunkedTooLarge() throws {
        try withServer({ $0.maxBodyBytes = 64 * 1024 }) { _, port in
            let connection = try TestConnection(port: port)
            try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = Array("4000\r\n".utf8) + [UInt8](repeating: 97, count: 0x4000) + Array("\r\n".utf8)
            for _ in 0..<8 { try connection.send(chunk) }
            try connection.send("0\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 413)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(connection.closesWithin(2))
        }
    }

    @Test("a chunked body that never ends is cut off once far past the limit")
    func endlessChunked() throws {
        try withServer({ $0.maxBodyBytes = 1024 }) { _, port in
            let connection = try TestConnection(port: port)
            try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 97, count: 0x10000) + Array("\r\n".utf8)
            var sent = 0
            while sent < 64 << 20 {
                guard (try? connection.send(chunk)) != nil else { break }
                sent += chunk.count
            }
            #expect(sent < 32 << 20)
            #expect(connection.closesWithin(2))
        }
    }

    @Test("oversized headers get 431")
    func headersTooLarge() throws {
        try withServer { _, port in
            let big = String(repeating: "a", count: 40 * 1024)
            let connection = try TestConnection(port: port)
            try? connection.send("GET / HTTP/1.1\r\nHost: t\r\nX-Big: \(big)\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 431)
        }
    }

    @Test("smuggling shapes get 400 and the connection is closed promptly", arguments: [
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        "Content-Length: 5\r\nContent-Length: 6\r\n",
        "Content-Length: 5\r\nContent-Length: 5\r\n",
        "Transfer-Encoding: gzip\r\n",
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    ])
    func smuggling(framing: String) throws {
        try withServer { _, port in
            let connection = try TestConnection(port: port)
            let started = ContinuousClock.now
            try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\n\(framing)\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 400)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(connection.closesWithin(2))
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }

    @Test("a Content-Length that is not a plain number gets 400 and the connection is closed")
    func malformedContentLength() throws {
        try withServer { _, port in
            for framing in ["Content-Length: +5", "Content-Length: 5, 5", "Content-Length: 0x5", "Content-Length: -1"] {
                let connection = try TestConnection(port: port)
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\n\(framing)\r\n\r\nhello")
                let response = try connection.readResponse()
                #expect(response.status == 400, "\(framing)")
                #expect(connection.closesWithin(2))
            }
        }
    }

    @Test("a slow handler does not hold up other requests")
    func concurrency() throws {
        let handler: HTTPServer.Handler = { request in
            if request.path == "/slow" { usleep(200_000) }
            return .text(200, request.path)
        }
        try withServer(handler: handler) { _, port in
            let started = ContinuousClock.now
            let statuses = Mutex<[Int]>([])
            let clients = (0..<8).map { _ in
                Thread {
                    let status = (try? HTTPClient(port: port).get("/slow").status) ?? -1
                    statuses.withLock { $0.append(status) }
                }
            }
            clients.forEach { $0.start() }
            while statuses.withLock({ $0.count }) < 8 && ContinuousClock.now - started < .seconds(5) { usleep(5_000) }
            // Eight 200 ms handlers in parallel, not one after another (1.6 s).
            #expect(ContinuousClock.now - started < .milliseconds(600))
            #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 8))

            // A fast request while slow ones are running is answered at once.
            let slow = Thread { _ = try? HTTPClient(port: port).get("/slow") }
            slow.start()
            usleep(50_000)
            let fastStarted = ContinuousClock.now
            let fast = try HTTPClient(port: port).get("/fast")
            #expect(fast.status == 200)
            #expect(ContinuousClock.now - fastStarted < .milliseconds(150))
        }
    }

    @Test("stop() lets a request in flight finish, then refuses connections")
    func gracefulStop() throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(configuration: configuration) { _ in
            usleep(300_000)
            return .text(200, "finished")
        }
        let port = try server.start()
        let connection = try TestConnection(port: port)
        try connection.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(50_000)
        let stopped = Atomic<Bool>(false)
        let stopper = Thread {
            server.stop()
            stopped.store(true, ordering: .relaxed)
        }
        stopper.start()
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "finished")
        #expect(response.header("Connection")?.lowercased() == "close")
        let deadline = Date(timeIntervalSinceNow: 3)
        while !stopped.load(ordering: .relaxed) && Date() < deadline { usleep(10_000) }
        let didStop = stopped.load(ordering: .relaxed)
        #expect(didStop)
        #expect(throws: (any Error).self) { _ = try TestConnection(port: port) }
    }

    @Test("a handler that overruns the request timeout yields 503 with Retry-After")
    func requestTimeout() throws {
        try withServer({ $0.requestTimeoutSeconds = 0.3 }, handler: { _ in
            usleep(1_000_000)
            return .text(200, "late")
        }) { _, port in
            let started = ContinuousClock.now
            let response = try HTTPClient(port: port).get("/slow")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "1")
            #expect(ContinuousClock.now - started < .milliseconds(900))
        }
    }

    @Test("requests that time out while queued are never run")
    func queuedTimeoutsAreSkipped() throws {
        let runs = Atomic<Int>(0)
        try withServer({
            $0.workerThreads = 1
            $0.requestTimeoutSeconds = 0.3
        }, handler: { _ in
            runs.wrappingAdd(1, ordering: .relaxed)
            usleep(500_000)
            return .text(200, "late")
        }) { _, port in
            let statuses = Mutex<[Int]>([])
            let clients = (0..<3).map { _ in
                Thread {
                    let status = (try? HTTPClient(port: port).get("/slow").status) ?? -1
                    statuses.withLock { $0.append(status) }
                }
            }
            clients.forEach { $0.start() }
            let started = ContinuousClock.now
            while statuses.withLock({ $0.count }) < 3 && ContinuousClock.now - started < .seconds(5) { usleep(5_000) }
            #expect(statuses.withLock { $0 } == [503, 503, 503])
            usleep(600_000)
            let count = runs.load(ordering: .relaxed)
            #expect(count == 1)
        }
    }

    @Test("many keep-alive clients get their own answers, never another request's")
    func noCrossTalk() throws {
        try withServer { _, port in
            let failures = Atomic<Int>(0)
            let done = Atomic<Int>(0)
            let clients = (0..<16).map { client in
                Thread {
                    defer { done.wrappingAdd(1, ordering: .relaxed) }
                    guard let connection = try? TestConnection(port: port) else {
                        failures.wrappingAdd(1, ordering: .relaxed)
                        return
                    }
                    for index in 0..<100 {
                        let body = "client \(client) request \(index)"
                        guard (try? connection.send("POST /c\(client)?i=\(index) HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")) != nil,
                              let response = try? connection.readResponse(),
                              response.status == 200, response.text.contains("body=\(body)"),
                              response.text.contains("query.i=\(index)\n")
                        else {
                            failures.wrappingAdd(1, ordering: .relaxed)
                            return
                        }
                    }
                }
            }
            clients.forEach { $0.start() }
            let started = ContinuousClock.now
            while done.load(ordering: .relaxed) < 16 && ContinuousClock.now - started < .seconds(20) { usleep(5_000) }
            let failed = failures.load(ordering: .relaxed)
            #expect(failed == 0)
        }
    }

    @Test("stop() under load returns promptly and leaves no connection suspended")
    func stopUnderLoad() throws {
        for _ in 0..<3 {
            var configuration = HTTPServerConfiguration()
            configuration.port = 0
            configuration.workerThreads = 4
            configuration.shutdownGraceSeconds = 1
            let server = HTTPServer(configuration: configuration) { request in
                usleep(request.path == "/slow" ? 2_000_000 : 2_000)
                return .text(200, "ok")
            }
            let port = try server.start()
            let running = Atomic<Bool>(true)
            let finished = Atomic<Int>(0)
            let clients = (0..<8).map { index in
                Thread {
                    defer { finished.wrappingAdd(1, ordering: .relaxed) }
                    while running.load(ordering: .relaxed) {
                        guard let connection = try? TestConnection(port: port, timeout: 3) else { return }
                        for _ in 0..<20 {
                            let path = index == 0 ? "/slow" : "/fast"
                            guard (try? connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")) != nil,
                                  (try? connection.readResponse()) != nil else { break }
                        }
                    }
                }
            }
            clients.forEach { $0.start() }
            usleep(300_000)
            let started = ContinuousClock.now
            server.stop()
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(4))
            running.store(false, ordering: .relaxed)
            while finished.load(ordering: .relaxed) < 8 && ContinuousClock.now - started < .seconds(10) { usleep(5_000) }
        }
    }

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

    @Test("connections beyond the per-IP limit are closed, the others keep working")
    func perIPLimit() throws {
        try withServer({ $0.perIPConnectionLimit = 2 }) { _, port in
            let first = try TestConnection(port: port)
            let second = try TestConnection(port: port)
            try first.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
            let firstResponse = try first.readResponse()
            #expect(firstResponse.status == 200)
            let third = try TestConnection(port: port)
            #expect(third.closesWithin(1))
            try second.send("GET /b HTTP/1.1\r\nHost: t\r\n\r\n")
            let secondResponse = try second.readResponse()
            #expect(secondResponse.status == 200)
        }
    }

    @Test("a silent connection is closed after the idle timeout")
    func idleTimeout() throws {
        try withServer({ $0.idleTimeoutSeconds = 1 }) { _, port in
            let connection = try TestConnection(port: port)
            let started = ContinuousClock.now
            #expect(connection.closesWithin(3))
            #expect(ContinuousClock.now - started > .milliseconds(500))
        }
    }

    @Test("port 0 binds a free port and a taken port is reported")
    func ports() throws {
        try withServer { server, port in
            #expect(port > 0)
            #expect(server.port == port)
            var configuration = HTTPServerConfiguration()
            configuration.port = port
            let second = HTTPServer(configuration: configuration, handler: echo)
            #expect(throws: HTTPServerError.self) { try second.start() }
        }
    }
}
