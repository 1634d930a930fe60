import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP
#if canImport(Glibc)
import Glibc
#endif

extension ClientFacingTests {
    @Suite("slow clients")
    struct SlowClients {
        @Test("a request head sent one byte at a time is cut at the head deadline, though every byte restarts the idle timeout")
        func slowHeadIsCutAtTheDeadline() throws {
            try serve({ $0.headTimeoutSeconds = 2; $0.idleTimeoutSeconds = 30 }) { port in
                let connection = try TestConnection(port: port, timeout: 0.2)
                let started = Date()
                var closed = false
                for byte in Array("GET /x HTTP/1.1\r\nHost: t\r\nX-Slow: ".utf8) + [UInt8](repeating: 97, count: 100) {
                    if (try? connection.send([byte])) == nil || connection.closesWithin(0.2) {
                        closed = true
                        break
                    }
                }
                let seconds = Date().timeIntervalSince(started)
                #expect(closed, "still open after \(seconds) s")
                #expect(seconds > 1.8 && seconds < 4, "closed after \(seconds) s with a 2 s head deadline")
            }
        }

        @Test("the head deadline also bounds the headers after a keep-alive request line, but not the idle wait before it")
        func keepAliveWaitIsNotHeadTime() throws {
            try serve({ $0.headTimeoutSeconds = 2; $0.idleTimeoutSeconds = 30 }) { port in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("GET /first HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(try connection.readResponse().status == 200)
                Thread.sleep(forTimeInterval: 3)   // idle longer than the head deadline: allowed
                try connection.send("GET /second HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(try connection.readResponse().status == 200)
                let started = Date()
                try connection.send("GET /third HTTP/1.1\r\nHost: t\r\n")
                var closed = false
                while Date().timeIntervalSince(started) < 5 {
                    if (try? connection.send("X")) == nil || connection.closesWithin(0.3) {
                        closed = true
                        break
                    }
                }
                let seconds = Date().timeIntervalSince(started)
                #expect(closed && seconds > 1.8 && seconds < 4, "closed: \(closed) after \(seconds) s")
            }
        }

        @Test("a body trickling in slower than the body deadline gets 408 problem+json and the handler never runs")
        func slowBodyGets408AtTheDeadline() throws {
            let calls = Calls()
            try serve({ $0.bodyTimeoutSeconds = 2; $0.idleTimeoutSeconds = 30 }, handler: calls.handler) { port in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n")
                let started = Date()
                let sender = Thread {
                    for _ in 0..<100 {
                        if (try? connection.send("a")) == nil { return }
                        Thread.sleep(forTimeInterval: 0.1)
                    }
                }
                sender.start()
                let response = try connection.readResponse()
                let seconds = Date().timeIntervalSince(started)
                #expect(isProblem(response, 408), "\(response.status) \(response.text)")
                #expect(seconds > 1.8 && seconds < 3.5, "answered after \(seconds) s with a 2 s body deadline")
            }
            #expect(calls.count.load(ordering: .relaxed) == 0)
        }

        @Test("a body that stops arriving is cut a second after the body deadline, though the idle timeout is longer")
        func silentBodyIsCutAfterTheDeadline() throws {
            let calls = Calls()
            try serve({ $0.bodyTimeoutSeconds = 2; $0.idleTimeoutSeconds = 30 }, handler: calls.handler) { port in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nhalf")
                let started = Date()
                #expect(connection.closesWithin(6))
                let seconds = Date().timeIntervalSince(started)
                #expect(seconds > 2.8 && seconds < 4.5, "closed after \(seconds) s with a 2 s body deadline and 1 s of grace")
            }
            #expect(calls.count.load(ordering: .relaxed) == 0)
        }
    }
}
