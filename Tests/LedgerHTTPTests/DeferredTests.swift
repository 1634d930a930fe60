import Dispatch
import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

/// Runs a server whose deferred handler is `deferred` and whose ordinary
/// handler answers "worker:<path>".
private func withDeferredServer<T>(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    observer: (@Sendable (HTTPExchange) -> Void)? = nil,
    deferred: @escaping @Sendable (HTTPRequest, Responder) -> DeferredStart,
    _ body: (HTTPServer, Int) throws -> T
) throws -> T {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.workerThreads = 4
    configuration.shutdownGraceSeconds = 5
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, observer: observer, deferred: deferred) { request in
        .text(200, "worker:\(request.path)")
    }
    let port = try server.start()
    defer { server.stop() }
    return try body(server, port)
}

/// Answers from another thread after `delay` seconds, as a group commit's answer would.
private func later(_ delay: Double, _ responder: Responder, _ response: HTTPResponse) {
    DispatchQueue.global().asyncAfter(deadline: .now() + delay) { responder.respond(response) }
}

@Suite("HTTP server: deferred answers", .serialized)
struct DeferredTests {
    @Test("a pending request is answered from another thread; a declined one runs the ordinary handler")
    func pendingAndDeclined() throws {
        try withDeferredServer(deferred: { request, responder in
            guard request.path.hasPrefix("/later/") else { return .declined }
            later(0.05, responder, .text(201, "later:\(request.path)"))
            return .pending
        }) { _, port in
            let connection = try TestConnection(port: port)
            for round in 0..<3 {
                try connection.send("POST /later/\(round) HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
                let deferred = try connection.readResponse()
                #expect(deferred.status == 201)
                #expect(deferred.text == "later:/later/\(round)")
                #expect(deferred.header("X-Request-Id")?.count == 32)
                try connection.send("POST /other/\(round) HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
                let declined = try connection.readResponse()
                #expect(declined.status == 200)
                #expect(declined.text == "worker:/other/\(round)")
            }
        }
    }

    @Test("an answer may come before the handler has even returned")
    func answerBeforeReturn() throws {
        try withDeferredServer(deferred: { request, responder in
            responder.respond(.text(200, "at once:\(request.path)"))
            return .pending
        }) { _, port in
            for round in 0..<20 {
                let response = try HTTPClient(port: port).get("/now/\(round)")
                #expect(response.status == 200)
                #expect(response.text == "at once:/now/\(round)")
            }
        }
    }

    @Test("a deferred answer that never comes yields 503 with Retry-After; a late one is dropped")
    func timeout() throws {
        let late = Mutex<Responder?>(nil)
        try withDeferredServer({ $0.requestTimeoutSeconds = 0.3 }, deferred: { _, responder in
            late.withLock { $0 = responder }
            return .pending
        }) { _, port in
            let started = ContinuousClock.now
            let response = try HTTPClient(port: port).get("/never")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "1")
            #expect(ContinuousClock.now - started < .milliseconds(900))
            let delivered = late.withLock { $0 }?.respond(.text(200, "too late"))
            #expect(delivered == false)
            // The connection's next request is unaffected by the dropped answer.
            #expect(try HTTPClient(port: port).get("/never-again").status == 503)
        }
    }

    @Test("expire: no answer within its time gives the expiry answer, well before the request timeout; an answer in time wins")
    func expiry() throws {
        try withDeferredServer({ $0.requestTimeoutSeconds = 10 }, deferred: { request, responder in
            if request.path == "/answered" {
                // A generous expiry: a loaded machine (the whole suite at once) may be slow to answer.
                responder.expire(after: 3) { .text(504, "expired:\(request.path)") }
                Thread { usleep(50_000); responder.respond(.text(200, "in time")) }.start()
            } else {
                responder.expire(after: 0.3) { .text(504, "expired:\(request.path)") }
            }
            return .pending
        }) { _, port in
            let started = ContinuousClock.now
            let expired = try HTTPClient(port: port).get("/silent")
            #expect(expired.status == 504)
            #expect(expired.text == "expired:/silent")
            #expect(ContinuousClock.now - started < .seconds(2))
            let answered = try HTTPClient(port: port).get("/answered")
            #expect(answered.status == 200 && answered.text == "in time")
        }
    }

    @Test("stop waits for pending answers, then every request has its answer")
    func stopWaitsForPending() throws {
        let answered = Atomic<Int>(0)
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.workerThreads = 2
        configuration.shutdownGraceSeconds = 5
        let server = HTTPServer(configuration: configuration, observer: { exchange in
            if exchange.status == 200 && exchange.completed { answered.wrappingAdd(1, ordering: .relaxed) }
        }, deferred: { _, responder in
            later(0.4, responder, .text(200, "committed"))
            return .pending
        }) { _ in .text(500, "not here") }
        let port = try server.start()
        let statuses = Mutex<[Int]>([])
        let clients = (0..<8).map { index in
            Thread {
                let status = (try? HTTPClient(port: port).get("/write/\(index)").status) ?? -1
                statuses.withLock { $0.append(status) }
            }
        }
        clients.forEach { $0.start() }
        usleep(150_000)   // every request is in and pending
        server.stop()
        let started = ContinuousClock.now
        while statuses.withLock({ $0.count }) < 8 && ContinuousClock.now - started < .seconds(5) { usleep(5_000) }
        #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 8))
        #expect(answered.load(ordering: .relaxed) == 8)
    }
}
