import Testing
import LedgerCore

/// The event store answers "duplicate" only when an existing key has the same
/// stream, type and payload. These tests pin that redeliveries of the same
/// content produce exactly that: the same key and the same payload.
@Suite("redeliveries give the same key and the same payload")
struct RedeliveryTests {
    static func same(_ a: LedgerEvent, _ b: LedgerEvent) -> Bool {
        a.idempotencyKey == b.idempotencyKey && a.stream == b.stream && a.type == b.type && a.payload == b.payload
    }

    @Test("a web3 webhook retried with a new timestamp and a rotated key is a duplicate")
    func web3Retry() throws {
        let body = bytes(#"{"merchantOrderNo":"SO-1","status":3,"amount":"40"}"#)
        func deliver(_ ts: String, key: String) throws -> LedgerEvent {
            let h = ["x-pay-timestamp": ts, "x-pay-signature": Web3Webhook.signature(key: key, timestamp: ts, body: body)]
            return try Web3Webhook.ingest(headers: h, body: body, keys: ["old", "new"], now: Timestamp(seconds: 1_764_417_600)).event
        }
        let first = try deliver("1764417600", key: "old")
        let retry = try deliver("1764417610", key: "new")
        #expect(Self.same(first, retry))
        #expect(first.observedAt != retry.observedAt && first.metadata != retry.metadata)
    }

    @Test("a Banxa webhook retried with a new nonce is a duplicate")
    func banxaRetry() throws {
        let body = bytes(#"{"external_id":"SO-1","status":"complete"}"#)
        func deliver(_ nonce: String) throws -> LedgerEvent {
            let auth = "Bearer key:" + BanxaWebhook.signature(secret: "s", nonce: nonce, body: body) + ":" + nonce
            return try BanxaWebhook.ingest(headers: ["authorization": auth], body: body, apiKey: "key", secrets: ["s"], now: Timestamp(seconds: 1_764_417_600)).event
        }
        #expect(Self.same(try deliver("1764417600000"), try deliver("1764417605000")))
    }

    @Test("client relays, registrations and corrections retried later are duplicates")
    func apiRetries() throws {
        let relay = bytes(#"{"provider":"banxa","callback":"banxaDidDismiss","clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
        let c1 = try ClientEventRequest.parse(merchantOrderNo: orderNo("SO-1"), body: relay, receivedAt: t0)
        let c2 = try ClientEventRequest.parse(merchantOrderNo: orderNo("SO-1"), body: relay, receivedAt: at(30))
        #expect(Self.same(.clientSignal(c1), .clientSignal(c2)))
        let reg = bytes(#"{"merchantOrderNo":"SO-1","provider":"web3","amount":"40","asset":"USDT"}"#)
        let r1 = try OrderRequests.registration(body: reg, receivedAt: t0), r2 = try OrderRequests.registration(body: reg, receivedAt: at(30))
        #expect(Self.same(.registered(r1), .registered(r2)))
        let fix = bytes(#"{"status":4,"reason":"confirmed with the bank","correctionId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
        let o1 = try OrderRequests.correction(merchantOrderNo: orderNo("SO-1"), body: fix, actor: "alice", uniqueId: "r1", receivedAt: t0)
        let o2 = try OrderRequests.correction(merchantOrderNo: orderNo("SO-1"), body: fix, actor: "alice", uniqueId: "r2", receivedAt: at(30))
        #expect(Self.same(.observed(o1), .observed(o2)))
    }

    @Test("different content under the same key differs in payload (the store calls it a key conflict)")
    func conflictIsVisible() throws {
        let a = try OrderRequests.registration(body: bytes(#"{"merchantOrderNo":"SO-1","provider":"web3","amount":"40","asset":"USDT"}"#), receivedAt: t0)
        let b = try OrderRequests.registration(body: bytes(#"{"merchantOrderNo":"SO-1","provider":"web3","amount":"41","asset":"USDT"}"#), receivedAt: t0)
        #expect(a.idempotencyKey == b.idempotencyKey && LedgerEvent.registered(a).payload != LedgerEvent.registered(b).payload)
    }
}
