import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// Hostile framing and sizes, sent byte for byte: a proxy in front could frame
/// an ambiguous request differently and hide a second request inside it.
@Suite("Request smuggling shapes, body limits and bad bodies")
final class FramingTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("framing") }
    deinit { ledger.stop() }

    /// Sends `head` + `body` on a connection that first served a keep-alive
    /// request, and returns the answer plus what followed it.
    private func smuggle(_ head: String, _ body: String) throws -> (reply: Reply, extra: [UInt8], closed: Bool) {
        let connection = try TestConnection(port: ledger.port, timeout: 10)
        try connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        let warmup = try connection.readResponse()
        #expect(warmup.status == 200, "the connection works before the attack: \(warmup)")
        try connection.send(head + "\r\n" + body)
        let reply = try connection.readResponse()
        let (extra, closed) = connection.readUntilClosed(within: 5)
        return (reply, extra, closed)
    }

    private static let hidden = "GET /v1/ledger/head HTTP/1.1\r\nHost: t\r\n\r\n"

    @Test("Transfer-Encoding and Content-Length together are 400, the connection is closed, and the hidden request is never answered")
    func transferEncodingWithContentLength() throws {
        let chunked = "0\r\n\r\n" + Self.hidden
        let (reply, extra, closed) = try smuggle(
            "POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(chunked.utf8.count)\r\nTransfer-Encoding: chunked\r\n",
            chunked)
        #expect(reply.status == 400, "\(reply)")
        #expect(reply.isProblem, "\(reply)")
        #expect(closed, "the connection must be closed after an ambiguous frame")
        #expect(extra.isEmpty, "nothing after the 400: \(String(decoding: extra, as: UTF8.self))")
    }

    @Test("two different Content-Lengths are 400 and the connection is closed")
    func twoContentLengths() throws {
        let body = #"{"a":1}"# + Self.hidden
        let (reply, extra, closed) = try smuggle(
            "POST /v1/orders HTTP/1.1\r\nHost: t\r\nContent-Length: 7\r\nContent-Length: \(body.utf8.count)\r\n", body)
        #expect(reply.status == 400 && reply.isProblem, "\(reply)")
        #expect(closed)
        #expect(extra.isEmpty, "\(String(decoding: extra, as: UTF8.self))")
    }

    @Test("two equal Content-Lengths are still refused with 400 and a close")
    func twoEqualContentLengths() throws {
        let (reply, _, closed) = try smuggle("POST /v1/orders HTTP/1.1\r\nHost: t\r\nContent-Length: 7\r\nContent-Length: 7\r\n", #"{"a":1}"#)
        #expect(reply.status == 400, "\(reply)")
        #expect(closed)
    }

    @Test("Transfer-Encoding other than chunked (gzip, or chunked hidden in a list) is 400 and the connection is closed",
          arguments: ["gzip", "gzip, chunked", "chunked, identity", "xchunked"])
    func unsupportedTransferEncoding(_ coding: String) throws {
        let (reply, extra, closed) = try smuggle(
            "POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: \(coding)\r\n", "5\r\nhello\r\n0\r\n\r\n" + Self.hidden)
        #expect(reply.status == 400, "Transfer-Encoding: \(coding) → \(reply)")
        #expect(closed, "Transfer-Encoding: \(coding)")
        #expect(extra.isEmpty, "\(String(decoding: extra, as: UTF8.self))")
    }

    @Test("an obfuscated framing header name is 400 and the connection is closed")
    func obfuscatedHeaderName() throws {
        let (reply, _, closed) = try smuggle(
            "POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding : chunked\r\n", "0\r\n\r\n")
        #expect(reply.status == 400, "\(reply)")
        #expect(closed)
    }

    @Test("a plain chunked request is still accepted (the guard is not a blanket refusal)")
    func chunkedAccepted() throws {
        let body = LedgerFixture.web3Body("FR-1", status: 2)
        let timestamp = String(Timestamp.now().seconds)
        let signature = Web3Webhook.signature(key: "key-new", timestamp: timestamp, body: body)
        let connection = try TestConnection(port: ledger.port)
        let half = body.count / 2
        var request = Array("POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nConnection: close\r\nTransfer-Encoding: chunked\r\nX-Pay-Timestamp: \(timestamp)\r\nX-Pay-Signature: \(signature)\r\n\r\n".utf8)
        request += Array(String(half, radix: 16).utf8) + [13, 10] + body[..<half] + [13, 10]
        request += Array(String(body.count - half, radix: 16).utf8) + [13, 10] + body[half...] + [13, 10]
        request += Array("0\r\n\r\n".utf8)
        try connection.send(request)
        let reply = try connection.readResponse()
        #expect(reply.status == 200, "\(reply)")
        #expect(try ledger.storedCount(web3Body: body) == 1)
    }

    @Test("two webhooks pipelined in one write on a keep-alive connection are both answered, in order, and both stored")
    func pipelinedRequests() throws {
        let timestamp = String(Timestamp.now().seconds)
        var bytes: [UInt8] = []
        var bodies: [[UInt8]] = []
        for status in [2, 3] {
            let body = LedgerFixture.web3Body("PL-1", status: status)
            bodies.append(body)
            let signature = Web3Webhook.signature(key: "key-new", timestamp: timestamp, body: body)
            bytes += Array("POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nX-Pay-Timestamp: \(timestamp)\r\nX-Pay-Signature: \(signature)\r\n\r\n".utf8) + body
        }
        let connection = try TestConnection(port: ledger.port)
        try connection.send(bytes)
        let first = try connection.readResponse()
        let second = try connection.readResponse()
        #expect(first.status == 200 && second.status == 200, "\(first) / \(second)")
        #expect(first["eventId"] != second["eventId"])
        #expect(try bodies.allSatisfy { try ledger.storedCount(web3Body: $0) == 1 })
        #expect(try ledger.order("PL-1")["status"]?.int64Value == 3)
    }

    @Test("a 2 MiB body announced by Content-Length gets 413 with a problem before it is read")
    func twoMebibytesByLength() throws {
        let connection = try TestConnection(port: ledger.port)
        // Only the head is sent: the answer must not depend on reading 2 MiB first.
        try connection.send("POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(2 << 20)\r\n\r\n")
        let reply = try connection.readResponse()
        #expect(reply.status == 413, "\(reply)")
        #expect(reply.isProblem, "\(reply)")
    }

    @Test("a 2 MiB webhook written in full before the answer is read (as Python's urllib does) gets its 413 problem, five times in a row")
    func twoMebibytesWrittenInFull() throws {
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)
        for attempt in 1...5 {
            let connection = try TestConnection(port: ledger.port)
            try connection.send(Array("POST /v1/webhooks/web3 HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
            let reply = try connection.readResponse()
            #expect(reply.status == 413 && reply.isProblem, "attempt \(attempt): \(reply)")
        }
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events") == 0)
    }

    @Test("a 2 MiB chunked body gets 413 with a problem, and nothing is stored")
    func twoMebibytesChunked() throws {
        let connection = try TestConnection(port: ledger.port)
        try connection.send("POST /v1/orders HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(ledger.ingest)\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 0x10000) + [13, 10]
        // The sender runs beside the reader: the server may answer (and stop reading) before the last chunk.
        let sender = Thread {
            for _ in 0..<32 { if (try? connection.send(chunk)) == nil { return } }
            _ = try? connection.send("0\r\n\r\n")
        }
        sender.start()
        let reply = try connection.readResponse()
        #expect(reply.status == 413, "\(reply)")
        #expect(reply.isProblem, "\(reply)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events") == 0)
    }

    @Test("a body of exactly the limit is read and judged on its content; one byte more is 413")
    func limitBoundary() throws {
        let limit = 1 << 20
        var exactly = Array(#"{"merchantOrderNo":"FR-2","provider":"web3","amount":"1","asset":"USDT","pad":""#.utf8)
        exactly += [UInt8](repeating: UInt8(ascii: "x"), count: limit - exactly.count - 2) + Array(#""}"#.utf8)
        #expect(exactly.count == limit)
        let atLimit = try ledger.client.post("/v1/orders", token: ledger.ingest, body: exactly)
        #expect(atLimit.status == 201, "a body of exactly LEDGER_MAX_BODY is accepted: \(atLimit)")
        // One byte more: the head alone decides (sending the body would race the server's close).
        let connection = try TestConnection(port: ledger.port)
        try connection.send("POST /v1/orders HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(ledger.ingest)\r\nContent-Length: \(limit + 1)\r\n\r\n")
        let over = try connection.readResponse()
        #expect(over.status == 413 && over.isProblem, "\(over)")
    }

    @Test("a body that is not JSON gets 400 with problem+json naming the problem")
    func notJSON() throws {
        for body in ["merchantOrderNo=N-1&amount=40", "{\"merchantOrderNo\":", "", "null", "\"just a string\""] {
            let reply = try ledger.client.post("/v1/orders", token: ledger.ingest, body: Array(body.utf8))
            #expect(reply.status == 400, "\(body.debugDescription) → \(reply)")
            #expect(reply.isProblem, "\(body.debugDescription) → \(reply)")
        }
        let invalidUTF8 = try ledger.client.post("/v1/orders", token: ledger.ingest, body: [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])
        #expect(invalidUTF8.status == 400 && invalidUTF8.isProblem, "\(invalidUTF8)")
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events") == 0)
    }

    @Test("oversized headers get 431")
    func oversizedHeaders() throws {
        let reply = try ledger.client.send("GET", "/healthz", headers: [("X-Padding", String(repeating: "p", count: 64 * 1024))])
        #expect(reply.status == 431, "\(reply)")
    }
}
