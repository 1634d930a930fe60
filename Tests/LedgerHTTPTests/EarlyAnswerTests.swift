import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP
#if canImport(Glibc)
import Glibc
#endif

extension ClientFacingTests {
    @Suite("early answers (lingering close)")
    struct EarlyAnswers {
        @Test("a client that writes a whole 6 MiB body before reading gets its 413 problem, five times in a row")
        func earlyAnswerReachesClientThatWritesFirst() throws {
            try serve { port in
                let body = [UInt8](repeating: UInt8(ascii: "x"), count: 6 << 20)
                for attempt in 1...5 {
                    let connection = try TestConnection(port: port, timeout: 10)
                    // The whole request first, as Python's http.client does; a reset fails send().
                    try connection.send(Array("POST /hook HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
                    let response = try connection.readResponse()
                    #expect(isProblem(response, 413), "attempt \(attempt): \(response.status) \(response.text)")
                    #expect(connection.closesWithin(2), "attempt \(attempt): the connection ends after the answer")
                }
            }
        }

        @Test("after an early answer a client that keeps sending is cut off once the linger budget is spent")
        func lingeringIsBounded() throws {
            try serve({ $0.lingerBytes = 1 << 20; $0.lingerSeconds = 2 }) { port in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("POST /hook HTTP/1.1\r\nHost: t\r\nContent-Length: \(64 << 20)\r\n\r\n")
                let chunk = [UInt8](repeating: 97, count: 64 * 1024)
                var sent = 0
                let started = Date()
                while sent < 64 << 20, (try? connection.send(chunk)) != nil { sent += chunk.count }
                #expect(sent < 32 << 20, "\(sent) bytes were taken after the 413")
                #expect(Date().timeIntervalSince(started) < 10)
            }
        }
    }
}
