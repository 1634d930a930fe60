import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// http-api.md, client events: SDK callbacks relayed for an order or an enrollment, and the short-lived tokens that relay them.
@Suite("Client events and client tokens")
final class ClientEventRouteTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("routes") }
    deinit { ledger.stop() }

    @Test("an SDK callback answers 201, its retry with the same clientEventId 200 duplicate, and it never moves the status")
    func clientEvents() throws {
        _ = try ledger.register("C-1")
        let body = #"{"provider":"banxa","callback":"banxaDidCompleteCheckout","payload":{"orderId":"bx-1","status":"complete"},"clientEventId":"0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d","sdkVersion":"1.2.0"}"#
        let first = try ledger.client.post("/v1/orders/C-1/client-events", token: ledger.ingest, json: body)
        #expect(first.status == 201, "\(first)")
        #expect(first["duplicate"]?.boolValue == false)
        let again = try ledger.client.post("/v1/orders/C-1/client-events", token: ledger.ingest, json: body)
        #expect(again.status == 200, "\(again)")
        #expect(again["duplicate"]?.boolValue == true)
        #expect(again["eventId"] == first["eventId"])

        let order = try ledger.order("C-1")
        #expect(order["status"]?.int64Value == 1, "a client signal is advisory: \(order)")
        #expect(order["paid"]?.boolValue == false)
        #expect(order["lastClientSignal"]?["callback"]?.stringValue == "banxaDidCompleteCheckout")
    }

    @Test("an SDK callback with an unknown name, a bad payload or a clientEventId that is not a UUID is 400")
    func clientEventValidation() throws {
        _ = try ledger.register("C-2")
        for body in [
            #"{"provider":"banxa","callback":"banxaDidExplode","clientEventId":"0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c01"}"#,
            #"{"provider":"banxa","callback":"banxaDidFail","payload":{"nope":1},"clientEventId":"0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c02"}"#,
            #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"not-a-uuid"}"#,
        ] {
            let reply = try ledger.client.post("/v1/orders/C-2/client-events", token: ledger.ingest, json: body)
            #expect(reply.status == 400 && reply.isProblem, "\(body) → \(reply)")
        }
    }

    @Test("a relayed callback over 64 KiB is 413 with a problem, for orders and enrollments, and nothing is stored; one just under is 201")
    func relaySizeLimit() throws {
        _ = try ledger.register("C-3")
        func body(_ filler: Int, _ id: String, provider: String = "banxa", callback: String = "banxaDidCompleteCheckout") -> String {
            let head = #"{"provider":"\#(provider)","callback":"\#(callback)","clientEventId":"\#(id)","payload":{"note":""#
            let tail = #""}}"#
            return head + String(repeating: "x", count: filler - head.utf8.count - tail.utf8.count) + tail
        }
        let over = try ledger.client.post("/v1/orders/C-3/client-events", token: ledger.ingest,
                                          json: body(Ingestion.relayMaxBytes + 1, "0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c31"))
        #expect(over.status == 413 && over.isProblem, "\(over)")
        #expect(String(decoding: over.body, as: UTF8.self).contains("at most 65536 bytes"))
        let enrollment = try ledger.client.post("/v1/enrollments/ENR-BIG/client-events", token: ledger.ingest,
                                                json: body(Ingestion.relayMaxBytes + 1, "0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c32",
                                                           provider: "bankpay", callback: "close"))
        #expect(enrollment.status == 413 && enrollment.isProblem, "\(enrollment)")
        #expect(try ledger.query("SELECT count(*) AS n FROM ledger.events WHERE source = 'client'").int64(0, "n") == 0)
        let under = try ledger.client.post("/v1/orders/C-3/client-events", token: ledger.ingest,
                                           json: body(Ingestion.relayMaxBytes, "0b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c33"))
        #expect(under.status == 201, "\(under.status)")
    }

    @Test("a client token relays at most 200 callbacks to one order: then 429, though a stored one's retry is still 200 duplicate and the ingest token is not limited")
    func clientRelayQuota() throws {
        _ = try ledger.register("Q-1")
        // 199 relays stored already, as an app's token would have sent them.
        let c = try ledger.connect()
        defer { c.close() }
        let events = try (0..<Int(Ingestion.clientRelaysPerStream) - 1).map { i -> NewEvent in
            let body = Array(#"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"\#(Self.uuid(i))"}"#.utf8)
            let signal = try ClientEventRequest.parse(merchantOrderNo: MerchantOrderNo("Q-1"), body: body, receivedAt: .now())
            return EventMapping.newEvent(.clientSignal(signal), raw: body, receipt: Receipt(requestID: "r", verifiedBy: "token:app"))
        }
        _ = try c.transaction { try EventStore().append(events, on: $0) }
        let minted = try ledger.client.post("/v1/orders/Q-1/client-tokens", token: ledger.ingest, json: "")
        let app = try #require(minted["token"]?.stringValue)
        func relay(_ i: Int, _ token: String) throws -> Reply {
            try ledger.client.post("/v1/orders/Q-1/client-events", token: token,
                                   json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"\#(Self.uuid(i))"}"#)
        }
        #expect(try relay(199, app).status == 201, "the 200th")
        let over = try relay(200, app)
        #expect(over.status == 429 && over.isProblem && over.header("Retry-After") == nil, "\(over)")
        #expect(String(decoding: over.body, as: UTF8.self).contains("merchant backend"))
        let retry = try relay(199, app)
        #expect(retry.status == 200 && retry["duplicate"]?.boolValue == true, "\(retry)")
        #expect(try relay(200, ledger.ingest).status == 201, "the ingest token is not limited")
        #expect(try ledger.query("SELECT count(*) AS n FROM ledger.events WHERE stream = 'order-Q-1'").int64(0, "n") == 202)
    }

    static func uuid(_ i: Int) -> String {
        let hex = String(i, radix: 16)
        return "0b7c2a4e-3f1d-4c8a-9e2b-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    @Test("a BankPay enrollment callback answers 201, its retry 200 duplicate, and moves the enrollment's read model")
    func enrollmentEvents() throws {
        let body = #"{"provider":"bankpay","callback":"onSuccess","payload":{"type":"bankAccountAdded","data":{"intent_id":"in_123"}},"clientEventId":"1b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#
        let first = try ledger.client.post("/v1/enrollments/ENR-1/client-events", token: ledger.ingest, json: body)
        #expect(first.status == 201, "\(first)")
        let again = try ledger.client.post("/v1/enrollments/ENR-1/client-events", token: ledger.ingest, json: body)
        #expect(again.status == 200, "\(again)")
        #expect(again["duplicate"]?.boolValue == true)
        #expect(try ledger.query("SELECT phase FROM ledger.enrollments WHERE enrollment_ref = 'ENR-1'").string(0, "phase") == "bank_account_added")

        let notBankPay = try ledger.client.post("/v1/enrollments/ENR-1/client-events", token: ledger.ingest,
                                                json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"1b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0e"}"#)
        #expect(notBankPay.status == 400 && notBankPay.isProblem, "\(notBankPay)")
    }

    @Test("minting a client token answers 201 with a token valid one hour, or ttlSeconds when shorter; more than 3600 is 400")
    func clientTokens() throws {
        _ = try ledger.register("T-1")
        let now = Timestamp.now().seconds
        let hour = try ledger.client.post("/v1/orders/T-1/client-tokens", token: ledger.ingest, json: "")
        #expect(hour.status == 201, "\(hour)")
        let token = try #require(hour["token"]?.stringValue)
        #expect(token.hasPrefix("lgr_"))
        let expires = try #require(hour["expiresAt"]?.stringValue.flatMap { Timestamp.parse($0) })
        #expect(abs(expires.seconds - (now + 3600)) <= 30, "expiresAt \(expires)")

        let short = try ledger.client.post("/v1/orders/T-1/client-tokens", token: ledger.ingest, json: #"{"ttlSeconds":120}"#)
        #expect(short.status == 201, "\(short)")
        let shortExpiry = try #require(short["expiresAt"]?.stringValue.flatMap { Timestamp.parse($0) })
        #expect(abs(shortExpiry.seconds - (now + 120)) <= 30, "expiresAt \(shortExpiry)")

        for bad in [#"{"ttlSeconds":3601}"#, #"{"ttlSeconds":0}"#, #"{"ttlSeconds":"600"}"#] {
            let reply = try ledger.client.post("/v1/orders/T-1/client-tokens", token: ledger.ingest, json: bad)
            #expect(reply.status == 400 && reply.isProblem, "\(bad) → \(reply)")
        }
        let unknown = try ledger.client.post("/v1/orders/T-404/client-tokens", token: ledger.ingest, json: "{}")
        #expect(unknown.status == 404 && unknown.isProblem, "\(unknown)")

        // The minted token is a working client credential for its order.
        let relayed = try ledger.client.post("/v1/orders/T-1/client-events", token: token,
                                             json: #"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"2b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
        #expect(relayed.status == 201, "\(relayed)")
        // Only the hash is stored.
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.tokens t WHERE position($1 in t::text) > 0", [.text(token)]) == 0)
    }
}
