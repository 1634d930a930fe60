import Foundation
import Synchronization
import LedgerTestSupport
import Testing
@testable import LedgerHTTP

extension ServerTests {
    @Suite("body, header, framing and connection limits")
    struct Limits {
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
    }
}
