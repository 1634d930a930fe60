import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// Provider webhooks authenticate by signature (providers.md): refused ones go
/// to quarantine, never to ledger.events; accepted ones are stored once.
@Suite("Webhooks: signatures, quarantine, redelivery and bad bodies")
final class WebhookTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("webhooks") }
    deinit { ledger.stop() }

    private func quarantined() throws -> [(reason: String, provider: String, headers: JSONValue, rawHex: String, remote: String)] {
        let r = try ledger.query("""
            SELECT reason, provider, headers::text AS headers, encode(raw, 'hex') AS raw, remote_address
              FROM ledger.quarantine ORDER BY id
            """)
        return try (0..<r.count).map { i in
            (try r.string(i, "reason"), try r.string(i, "provider"), try JSONValue.parse(try r.string(i, "headers")),
             try r.string(i, "raw"), try r.string(i, "remote_address"))
        }
    }

    private func eventCount() throws -> Int64 { try ledger.count("SELECT count(*) AS n FROM ledger.events") }

    @Test("a signed paid webhook with an amount that is no decimal is stored (200), paid, and flagged: the amount it cannot compare is an amount_mismatch; one it cannot read at all is left out and noted in its metadata")
    func unreadableAmountStored() throws {
        #expect(try ledger.register("UA-1").status == 201)
        let reply = try ledger.sendWeb3(LedgerFixture.web3Body("UA-1", status: 3, amount: "4O"))
        #expect(reply.status == 200, "\(reply)")
        let order = try ledger.order("UA-1")
        #expect(order["status"]?.int64Value == 3 && order["paid"]?.boolValue == true && order["attention"]?.boolValue == true, "\(order)")
        let conflict = order["conflicts"]?.arrayValue?.first
        #expect(conflict?["kind"]?.stringValue == "amount_mismatch" && conflict?["observed"]?.stringValue == "4O", "\(order)")

        #expect(try ledger.register("UA-2").status == 201)
        let body = Array(#"{"merchantOrderNo":"UA-2","orderNo":"GW-UA-2","status":3,"amount":{"value":"40"}}"#.utf8)
        #expect(try ledger.sendWeb3(body).status == 200)
        let metadata = try ledger.query("SELECT metadata::text AS m FROM ledger.events WHERE stream = 'order-UA-2' ORDER BY stream_version DESC LIMIT 1").string(0, "m")
        #expect(metadata.contains(#""leftOut""#) && metadata.contains(#""path": "amount""#), "\(metadata)")
        #expect(try ledger.order("UA-2")["paid"]?.boolValue == true)
        #expect(try ledger.verify() == [])
    }

    @Test("a second writer on the database: a signed webhook for an order only it wrote is stored once (a 503 to retry at worst, never a 500)")
    func secondWriter() throws {
        // The service's writer has committed, so it skips the round trip that reads the head.
        #expect(try ledger.register("SW-0").status == 201)
        // Another writer (another ledger serve, a script) registers SW-1, a stream this service never wrote.
        let c = try ledger.connect()
        defer { c.close() }
        let registration = try OrderRequests.registration(
            body: Array(#"{"merchantOrderNo":"SW-1","provider":"web3","amount":"40","asset":"USDT"}"#.utf8), receivedAt: .now())
        _ = try c.transaction {
            try EventStore().append([EventMapping.newEvent(.registered(registration), raw: nil,
                                                           receipt: Receipt(requestID: "other", verifiedBy: "token:other"))], on: $0)
        }
        let body = LedgerFixture.web3Body("SW-1", status: 3)
        let first = try ledger.sendWeb3(body)
        #expect(first.status == 200 || (first.status == 503 && first.header("Retry-After") != nil), "\(first)")
        if first.status == 503 { #expect(try ledger.sendWeb3(body).status == 200) }
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-SW-1'") == 2)
    }

    @Test("a forged webhook is 401, kept byte for byte in quarantine with the headers to check its signature again, counted, and never stored as an event")
    func forged() throws {
        let body = LedgerFixture.web3Body("W-1", status: 3)
        let timestamp = String(Timestamp.now().seconds)
        let headers = LedgerFixture.web3Headers(body, timestamp: timestamp, key: "an-attackers-guess")
        let signature = headers[1].1
        let before = try ledger.metric(#"ledger_rejected_deliveries_total{reason="bad_signature"}"#)
        let sentAfter = Timestamp.now()

        let reply = try ledger.client.post("/v1/webhooks/web3", body: body, headers: headers)
        let answeredBy = Timestamp.now()
        #expect(reply.status == 401, "\(reply)")
        #expect(reply.isProblem, "\(reply)")
        #expect(!reply.text.contains(signature))

        let kept = try quarantined()
        #expect(kept.count == 1)
        let entry = try #require(kept.first)
        #expect(entry.reason == "bad_signature")
        #expect(entry.provider == "web3")
        #expect(entry.rawHex == Hex.encode(body), "the raw bytes as received")
        #expect(entry.remote.hasPrefix("127.0.0.1"), "remote address \(entry.remote)")
        let receivedAt = try ledger.count("SELECT ledger.micros(received_at) AS n FROM ledger.quarantine")
        // PostgreSQL's clock and ours are the same host's; a millisecond of slack for rounding.
        #expect(receivedAt >= sentAfter.microseconds - 1_000 && receivedAt <= answeredBy.microseconds + 1_000,
                "the time it was received: \(receivedAt) not within \(sentAfter.microseconds)...\(answeredBy.microseconds)")
        let headerText = JSONSerializer.string(entry.headers)
        #expect(entry.headers["x-pay-timestamp"]?.stringValue == timestamp, "headers kept: \(headerText)")
        // A signature is the sender's claim, not a secret: kept, so the rejection can be checked again.
        #expect(entry.headers["x-pay-signature"]?.stringValue == signature, "headers: \(headerText)")
        #expect(Web3Webhook.signature(key: "an-attackers-guess", timestamp: timestamp, body: Hex.decode(entry.rawHex) ?? [])
                == signature, "the kept headers and raw bytes re-verify against the key that signed them")
        for secret in LedgerFixture.web3Keys + [LedgerFixture.banxaSecret] { #expect(!headerText.contains(secret)) }

        #expect(try ledger.metric(#"ledger_rejected_deliveries_total{reason="bad_signature"}"#) == before + 1)
        #expect(try ledger.storedCount(web3Body: body) == 0)
        #expect(try eventCount() == 0)
        #expect(try ledger.order("W-1").status == 404, "a forged webhook creates no order")
    }

    @Test("a stale or a future timestamp is 401 and quarantined with its reason, even when the signature is right")
    func timestampWindow() throws {
        let now = Timestamp.now().seconds
        let stale = LedgerFixture.web3Body("W-2", status: 3)
        let staleReply = try ledger.sendWeb3(stale, timestamp: now - 600)
        #expect(staleReply.status == 401 && staleReply.isProblem, "\(staleReply)")
        let future = LedgerFixture.web3Body("W-2", status: 4)
        let futureReply = try ledger.sendWeb3(future, timestamp: now + 600)
        #expect(futureReply.status == 401 && futureReply.isProblem, "\(futureReply)")

        #expect(try quarantined().map(\.reason) == ["stale_timestamp", "future_timestamp"])
        #expect(try ledger.metric(#"ledger_rejected_deliveries_total{reason="stale_timestamp"}"#) == 1)
        #expect(try eventCount() == 0)
    }

    @Test("an unsigned webhook, one without a timestamp, and one with a malformed signature are 401 and quarantined")
    func unsigned() throws {
        let body = LedgerFixture.web3Body("W-3", status: 3)
        let timestamp = String(Timestamp.now().seconds)
        let signature = Web3Webhook.signature(key: "key-new", timestamp: timestamp, body: body)
        let unsigned = try ledger.client.post("/v1/webhooks/web3", body: body, headers: [("X-Pay-Timestamp", timestamp)])
        #expect(unsigned.status == 401 && unsigned.isProblem, "\(unsigned)")
        let untimed = try ledger.client.post("/v1/webhooks/web3", body: body, headers: [("X-Pay-Signature", signature)])
        #expect(untimed.status == 401 && untimed.isProblem, "\(untimed)")
        let malformed = try ledger.client.post("/v1/webhooks/web3", body: body,
                                               headers: [("X-Pay-Timestamp", timestamp), ("X-Pay-Signature", "zz" + signature.dropFirst(2))])
        #expect(malformed.status == 401 && malformed.isProblem, "\(malformed)")

        #expect(try quarantined().map(\.reason) == ["missing_signature", "missing_timestamp", "malformed_signature"])
        #expect(try eventCount() == 0)
    }

    @Test("a staff bearer token is no substitute for a provider signature, and it never reaches the quarantine in clear")
    func staffTokenIsNotASignature() throws {
        let body = LedgerFixture.web3Body("W-10", status: 3)
        for path in ["/v1/webhooks/web3", "/v1/webhooks/banxa"] {
            let reply = try ledger.client.post(path, token: ledger.auditor, body: body)
            #expect(reply.status == 401 && reply.isProblem, "\(path): \(reply)")
        }
        let kept = try quarantined()
        #expect(kept.count == 2)
        #expect(kept.allSatisfy { !JSONSerializer.string($0.headers).contains(ledger.auditor) }, "\(kept.map(\.headers))")
        #expect(try eventCount() == 0)
    }

    @Test("a webhook signed with either configured key is accepted, so keys can be rotated")
    func rotatedKeys() throws {
        let old = try ledger.sendWeb3(LedgerFixture.web3Body("W-4", status: 2), key: "key-old")
        #expect(old.status == 200, "\(old)")
        let new = try ledger.sendWeb3(LedgerFixture.web3Body("W-4", status: 3), key: "key-new")
        #expect(new.status == 200, "\(new)")
        #expect(new["code"]?.int64Value == 0)
        #expect(new["duplicate"]?.boolValue == false)
        #expect(new["eventId"]?.stringValue?.isEmpty == false)
        #expect(try quarantined().isEmpty)
    }

    @Test("a millisecond timestamp (13 digits) is accepted like seconds")
    func millisecondTimestamp() throws {
        let body = LedgerFixture.web3Body("W-5", status: 2)
        let ms = String(Timestamp.now().microseconds / 1000)
        let reply = try ledger.client.post("/v1/webhooks/web3", body: body, headers: LedgerFixture.web3Headers(body, timestamp: ms))
        #expect(reply.status == 200, "\(reply)")
    }

    @Test("a redelivered webhook is 200 with duplicate true and the first eventId, also when retried with a new timestamp")
    func redelivery() throws {
        let body = LedgerFixture.web3Body("W-6", status: 3)
        let now = Timestamp.now().seconds
        let first = try ledger.sendWeb3(body, timestamp: now - 20)
        #expect(first.status == 200, "\(first)")
        #expect(first["duplicate"]?.boolValue == false)
        let eventId = try #require(first["eventId"]?.stringValue)

        let same = try ledger.sendWeb3(body, timestamp: now - 20)
        #expect(same.status == 200, "\(same)")
        #expect(same["duplicate"]?.boolValue == true)
        #expect(same["eventId"]?.stringValue == eventId)

        let retried = try ledger.sendWeb3(body, timestamp: now, key: "key-old")
        #expect(retried.status == 200, "\(retried)")
        #expect(retried["duplicate"]?.boolValue == true, "the same content with a new timestamp is a retry: \(retried)")
        #expect(retried["eventId"]?.stringValue == eventId)

        #expect(try ledger.storedCount(web3Body: body) == 1)
        #expect(try eventCount() == 1)
        let order = try ledger.order("W-6")
        #expect(order["eventCount"]?.int64Value == 1)
        let timeline = try ledger.client.get("/v1/orders/W-6/events", token: ledger.support)
        #expect(timeline["events"]?.arrayValue?.first?["redeliveries"]?.int64Value == 2, "\(timeline)")
        #expect(try ledger.metric("ledger_event_duplicates_total") == 2, "redeliveries are counted as duplicates")
        #expect(try ledger.metric("ledger_events_appended_total") == 1)
    }

    @Test("a correctly signed body that is not JSON, or not an object, is 400 with a problem and stores nothing")
    func notJSON() throws {
        for text in ["merchantOrderNo=W-7&status=3", "[1,2,3]", "{\"merchantOrderNo\":\"W-7\",", "\u{FEFF}"] {
            let body = Array(text.utf8)
            let reply = try ledger.sendWeb3(body)
            #expect(reply.status == 400, "\(text) → \(reply)")
            #expect(reply.isProblem, "\(text) → \(reply)")
        }
        #expect(try eventCount() == 0)
        // Refused, but signed: each is kept in quarantine with its reason, so the fact is not lost.
        let kept = try quarantined()
        #expect(kept.count == 4 && kept.allSatisfy { $0.provider == "web3" && $0.reason != "bad_signature" }, "\(kept)")
    }

    @Test("a signed webhook without the order reference or the status, or with a status outside 1-6, is 400")
    func missingFields() throws {
        for text in [#"{"orderNo":"GW-1","status":3}"#, #"{"merchantOrderNo":"W-8","statusText":"paid"}"#,
                     #"{"merchantOrderNo":"W-8","status":7}"#, #"{"merchantOrderNo":"W-8","status":0}"#,
                     #"{"merchantOrderNo":"not valid!","status":3}"#] {
            let reply = try ledger.sendWeb3(Array(text.utf8))
            #expect(reply.status == 400 && reply.isProblem, "\(text) → \(reply)")
        }
        #expect(try eventCount() == 0)
    }

    @Test("a webhook for an order never registered is stored, and the order appears with what the webhook says")
    func unregisteredOrder() throws {
        let reply = try ledger.sendWeb3(LedgerFixture.web3Body("W-9", status: 3, extra: #","txHash":"0xfeed""#))
        #expect(reply.status == 200, "\(reply)")
        let order = try ledger.order("W-9")
        #expect(order.status == 200, "\(order)")
        #expect(order["provider"]?.stringValue == "web3")
        #expect(order["status"]?.int64Value == 3)
        #expect(order["paid"]?.boolValue == true)
        #expect(order["providerOrderId"]?.stringValue == "GW-W-9")
        #expect(order["txHash"]?.stringValue == "0xfeed")
        #expect(order["eventCount"]?.int64Value == 1)
    }

    // MARK: Banxa

    private static func banxaBody(_ no: String, status: String) -> [UInt8] {
        Array(#"{"order_id":"bx-\#(no)","status":"\#(status)","status_date":"\#(Timestamp.now().rfc3339.prefix(19).replacingOccurrences(of: "T", with: " "))","created_at":"2026-11-29 10:00:00","external_id":"\#(no)","order_type":"CRYPTO-BUY","crypto_coin":"USDT","crypto_blockchain":"BSC","crypto_amount":"40","fiat_currency":"USD","fiat_amount":"41.20","payment_method":"card","transaction_hash":"0xbx"}"#.utf8)
    }

    private func sendBanxa(_ body: [UInt8], key: String = LedgerFixture.banxaAPIKey, secret: String = LedgerFixture.banxaSecret,
                           nonce: String = String(Timestamp.now().microseconds / 1000)) throws -> Reply {
        let signature = BanxaWebhook.signature(secret: secret, nonce: nonce, body: body)
        return try ledger.client.post("/v1/webhooks/banxa", body: body,
                                      headers: [("Authorization", "Bearer \(key):\(signature):\(nonce)")])
    }

    @Test("a Banxa webhook with a valid Bearer KEY:SIGNATURE:NONCE is 200 and moves the order")
    func banxaAccepted() throws {
        let body = Self.banxaBody("B-1", status: "paymentReceived")
        let reply = try sendBanxa(body)
        #expect(reply.status == 200, "\(reply)")
        #expect(reply["duplicate"]?.boolValue == false)
        let order = try ledger.order("B-1")
        #expect(order["status"]?.int64Value == 3, "\(order)")
        #expect(order["provider"]?.stringValue == "banxa")
        #expect(order["providerOrderId"]?.stringValue == "bx-B-1")
        let again = try sendBanxa(body, nonce: String(Timestamp.now().microseconds))
        #expect(again.status == 200, "a microsecond nonce (16 digits) is accepted: \(again)")
        #expect(again["duplicate"]?.boolValue == true, "a redelivery with a new nonce is a duplicate: \(again)")
    }

    @Test("a Banxa refund after completion is an adjustment: the order stays completed and shows refunded")
    func banxaRefund() throws {
        #expect(try sendBanxa(Self.banxaBody("B-3", status: "complete")).status == 200)
        let refund = try sendBanxa(Self.banxaBody("B-3", status: "refunded"))
        #expect(refund.status == 200, "\(refund)")
        let order = try ledger.order("B-3")
        #expect(order["status"]?.int64Value == 4, "\(order)")
        #expect(order["paid"]?.boolValue == true)
        #expect(order["refunded"]?.boolValue == true, "\(order)")
    }

    @Test("a Banxa webhook with a wrong secret, a wrong API key, a stale nonce or no Authorization is 401 and quarantined redacted")
    func banxaRefused() throws {
        let body = Self.banxaBody("B-2", status: "complete")
        let wrongSecret = try sendBanxa(body, secret: "not-the-secret")
        #expect(wrongSecret.status == 401 && wrongSecret.isProblem, "\(wrongSecret)")
        let wrongKey = try sendBanxa(body, key: "someone-else")
        #expect(wrongKey.status == 401 && wrongKey.isProblem, "\(wrongKey)")
        let stale = try sendBanxa(body, nonce: String((Timestamp.now().microseconds / 1000) - 900_000))
        #expect(stale.status == 401 && stale.isProblem, "\(stale)")
        let none = try ledger.client.post("/v1/webhooks/banxa", body: body)
        #expect(none.status == 401 && none.isProblem, "\(none)")

        let kept = try quarantined()
        #expect(kept.map(\.reason) == ["bad_signature", "unknown_api_key", "stale_timestamp", "missing_signature"])
        #expect(kept.allSatisfy { $0.provider == "banxa" && $0.rawHex == Hex.encode(body) })
        // The API key is redacted; the signature and nonce stay, to check the rejection again.
        for entry in kept.prefix(3) {
            let authorization = entry.headers["authorization"]?.stringValue ?? ""
            #expect(authorization.hasPrefix("Bearer [redacted]:") && authorization.split(separator: ":").count == 3,
                    "\(entry.headers)")
            #expect(!authorization.contains(LedgerFixture.banxaAPIKey + ":") && !authorization.contains("someone-else"))
            #expect(!JSONSerializer.string(entry.headers).contains(LedgerFixture.banxaSecret))
        }
        #expect(try eventCount() == 0)
        #expect(try ledger.order("B-2").status == 404)
    }

    @Test("a correctly signed Banxa body that is not JSON, lacks external_id or the status, or is over the limit is 400 or 413 with a problem, and stores nothing")
    func banxaBadBodies() throws {
        let complete = String(decoding: Self.banxaBody("B-4", status: "complete"), as: UTF8.self)
        let cases: [(String, String)] = [
            ("not JSON", "order_id=bx-B-4&status=complete"),
            ("an array", "[1,2]"),
            ("no external_id", complete.replacingOccurrences(of: #""external_id":"B-4","#, with: "")),
            ("no status", complete.replacingOccurrences(of: #""status":"complete","#, with: "")),
            ("an external_id that is no merchantOrderNo", complete.replacingOccurrences(of: #""external_id":"B-4""#, with: #""external_id":"B 4!""#)),
        ]
        for (what, text) in cases {
            #expect(text != complete, "\(what): the case must change the body")
            let reply = try sendBanxa(Array(text.utf8))
            #expect(reply.status == 400 && reply.isProblem, "\(what) → \(reply)")
        }
        // Over the limit: answered from the announced length, before the body is read (and
        // the connection closed), so only the head is sent.
        let connection = try TestConnection(port: ledger.port)
        try connection.send("POST /v1/webhooks/banxa HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                            + "Authorization: Bearer \(LedgerFixture.banxaAPIKey):\(String(repeating: "0", count: 64)):1\r\n"
                            + "Content-Length: \(2 << 20)\r\n\r\n")
        let tooLarge = try connection.readResponse()
        #expect(tooLarge.status == 413 && tooLarge.isProblem, "\(tooLarge)")
        #expect(try eventCount() == 0)
        // The refused signed bodies are kept in quarantine; the 413 was answered before any was read.
        let kept = try quarantined()
        #expect(kept.count == cases.count && kept.allSatisfy { $0.provider == "banxa" }, "\(kept)")
        #expect(try ledger.order("B-4").status == 404)
        #expect(try sendBanxa(Array(complete.utf8)).status == 200, "the body the cases were made from is accepted")
    }
}
