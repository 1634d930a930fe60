import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

extension ServerTests {
    @Suite("the worker pool and the request timeout")
    struct Workers {
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
    }
}
