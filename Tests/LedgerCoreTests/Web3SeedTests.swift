import Testing
import LedgerCore

/// Fixtures in the shape of seed 002 (web3 gateway, iOS integration guide).
@Suite("web3 adapter (seed 002)")
struct Web3SeedTests {
    static let key = "pk_test_9b8c7d6e5f"
    static let body = bytes(#"{"merchantOrderNo":"SO-20261129-0001","orderNo":"P1764417600123","status":3,"statusText":"paid","txHash":"0x9f2c4a1b","payAmountMinimal":"40000000","payAmountDisplay":"40.00","amount":"40","chainKey":"tron","chainId":2,"tokenId":1,"extraField":{"kept":true}}"#)
    static let ts = "1764417600"
    /// python3 -c 'import hmac,hashlib; print(hmac.new(b"pk_test_9b8c7d6e5f", b"1764417600"+BODY, hashlib.sha256).hexdigest())'
    static let expectedSignature = "4f358899307b0ee0e266ea4821ae60b9ea144a6945456ba305cbea10ddc9b7dd"
    /// Same with the 13-digit millisecond timestamp "1764417600123".
    static let expectedSignatureMs = "369181e95ea78604fbeca032007570132889de65d2f103087e8cbb67c7a7f2d9"
    /// python3 -c 'import hashlib; print(hashlib.sha256(BODY).hexdigest())'
    static let bodySHA256 = "96a4216f43fc903bbc0f36f5b1c1c7a0a29068ed917f55e8fa61dad301a6d1fd"
    static let now = Timestamp(seconds: 1_764_417_600)

    /// The seed's Swift `verify(rawBody:ts:sig:apiKey:)`, with our HMAC in place of CryptoKit:
    /// HMAC over the timestamp string followed by the raw body string, lowercase hex.
    func seedVerify(rawBody: String, ts: String, sig: String, apiKey: String) -> Bool {
        let want = Hex.encode(Crypto.hmacSHA256(key: Array(apiKey.utf8), parts: [Array(ts.utf8), Array(rawBody.utf8)]))
        return Crypto.constantTimeEqual(Array(want.utf8), Array(sig.utf8))
    }

    @Test("the seed's verify example and the adapter give python's hex signature for the same key, timestamp and body")
    func seedSignatureVector() {
        #expect(Web3Webhook.signature(key: Self.key, timestamp: Self.ts, body: Self.body) == Self.expectedSignature)
        #expect(Web3Webhook.signature(key: Self.key, timestamp: "1764417600123", body: Self.body) == Self.expectedSignatureMs)
        #expect(seedVerify(rawBody: String(decoding: Self.body, as: UTF8.self), ts: Self.ts, sig: Self.expectedSignature, apiKey: Self.key))
        #expect(!seedVerify(rawBody: String(decoding: Self.body, as: UTF8.self), ts: "1764417601", sig: Self.expectedSignature, apiKey: Self.key))
    }

    @Test("a signed webhook verifies and maps to a webhook observation with every field; the body itself is left to the raw bytes")
    func ingest() throws {
        let headers = ["x-pay-timestamp": Self.ts, "x-pay-signature": Self.expectedSignature]
        let (v, event) = try Web3Webhook.ingest(headers: headers, body: Self.body, keys: ["other-key", Self.key], now: Self.now)
        #expect(v.keyIndex == 1)
        #expect(v.keyId == "3263c60e")   // python3: hashlib.sha256(b"pk_test_9b8c7d6e5f").hexdigest()[:8]
        guard case .observed(let o) = event else { Issue.record("not an observation"); return }
        #expect(o.merchantOrderNo.value == "SO-20261129-0001")
        #expect(o.status == .paid && o.source == .webhook && o.provider == "web3")
        #expect(o.observedAt == Self.now)
        #expect(o.amount == "40" && o.txHash == "0x9f2c4a1b" && o.providerOrderId == "P1764417600123")
        #expect(o.body == nil, "the body is the event's raw bytes, not copied into the observation")
        #expect(o.keyId == "3263c60e")
        #expect(event.idempotencyKey == "web3:" + Self.bodySHA256)
        #expect(event.stream == "order-SO-20261129-0001" && event.type == "StatusObserved")
    }

    @Test("millisecond timestamps (13 digits) are accepted and read as milliseconds")
    func milliseconds() throws {
        let headers = ["X-Pay-Timestamp": "1764417600123", "X-Pay-Signature": Self.expectedSignatureMs]
        let v = try Web3Webhook.verify(headers: headers, body: Self.body, keys: [Self.key], now: Self.now)
        #expect(v.signedAt == Timestamp(microseconds: 1_764_417_600_123_000))
    }

    @Test("a retry with a new timestamp has the same idempotency key")
    func retryIsDuplicate() throws {
        let later = "1764417660"
        let headers = ["x-pay-timestamp": later, "x-pay-signature": Web3Webhook.signature(key: Self.key, timestamp: later, body: Self.body)]
        let (_, e1) = try Web3Webhook.ingest(headers: headers, body: Self.body, keys: [Self.key], now: Self.now)
        let (_, e2) = try Web3Webhook.ingest(headers: ["x-pay-timestamp": Self.ts, "x-pay-signature": Self.expectedSignature],
                                             body: Self.body, keys: [Self.key], now: Self.now)
        #expect(e1.idempotencyKey == e2.idempotencyKey)
        #expect(e1.observedAt != e2.observedAt)
    }

    @Test("the tolerance holds in both directions, in seconds and milliseconds")
    func tolerance() {
        let h = ["x-pay-timestamp": Self.ts, "x-pay-signature": Self.expectedSignature]
        #expect(coreError { try Web3Webhook.verify(headers: h, body: Self.body, keys: [Self.key], now: at(300)) } == nil)
        #expect(coreError { try Web3Webhook.verify(headers: h, body: Self.body, keys: [Self.key], now: at(-300)) } == nil)
        let stale = coreError { try Web3Webhook.verify(headers: h, body: Self.body, keys: [Self.key], now: at(301)) }
        #expect(stale == .staleTimestamp(skewSeconds: 301, toleranceSeconds: 300))
        #expect(stale?.isUnauthenticated == true && stale?.reason == "stale_timestamp")
        let future = coreError { try Web3Webhook.verify(headers: h, body: Self.body, keys: [Self.key], now: at(-301)) }
        #expect(future == .futureTimestamp(skewSeconds: 301, toleranceSeconds: 300))
        #expect(future?.reason == "future_timestamp")
        let hms = ["x-pay-timestamp": "1764417600123", "x-pay-signature": Self.expectedSignatureMs]
        #expect(coreError { try Web3Webhook.verify(headers: hms, body: Self.body, keys: [Self.key], now: at(301)) }?.reason == "stale_timestamp")
    }

    @Test("wrong, missing and malformed signatures are unauthenticated with distinct reasons")
    func badSignatures() {
        let wrong = ["x-pay-timestamp": Self.ts, "x-pay-signature": String(Self.expectedSignature.reversed())]
        #expect(coreError { try Web3Webhook.verify(headers: wrong, body: Self.body, keys: [Self.key], now: Self.now) } == .badSignature)
        var tampered = Self.body
        tampered[tampered.count - 3] = UInt8(ascii: "x")
        let good = ["x-pay-timestamp": Self.ts, "x-pay-signature": Self.expectedSignature]
        #expect(coreError { try Web3Webhook.verify(headers: good, body: tampered, keys: [Self.key], now: Self.now) } == .badSignature)
        #expect(coreError { try Web3Webhook.verify(headers: good, body: Self.body, keys: ["nope"], now: Self.now) }?.reason == "bad_signature")
        #expect(coreError { try Web3Webhook.verify(headers: ["x-pay-timestamp": Self.ts], body: Self.body, keys: [Self.key], now: Self.now) }?.reason == "missing_signature")
        #expect(coreError { try Web3Webhook.verify(headers: ["x-pay-signature": Self.expectedSignature], body: Self.body, keys: [Self.key], now: Self.now) }?.reason == "missing_timestamp")
        #expect(coreError { try Web3Webhook.verify(headers: ["x-pay-timestamp": Self.ts, "x-pay-signature": "abc"], body: Self.body, keys: [Self.key], now: Self.now) }?.reason == "malformed_signature")
        for ts in ["17644176001", "176441760012", "-1764417600", "1764417600.5", "abc", "99999999999999999999"] {
            let h = ["x-pay-timestamp": ts, "x-pay-signature": Self.expectedSignature]
            let e = coreError { try Web3Webhook.verify(headers: h, body: Self.body, keys: [Self.key], now: Self.now) }
            #expect(e?.isUnauthenticated == true, "\(ts)")
        }
        #expect(coreError { try Web3Webhook.verify(headers: good, body: Self.body, keys: [], now: Self.now) } == .noKeysConfigured)
    }

    @Test("a signed payment is recorded whatever its amounts' spelling: an empty amount is none, an exponent form is written out, payAmountMinimal is not read")
    func amountSpellings() throws {
        func observed(_ json: String) throws -> StatusObservation? {
            let b = bytes(json)
            let h = ["x-pay-timestamp": Self.ts, "x-pay-signature": Web3Webhook.signature(key: Self.key, timestamp: Self.ts, body: b)]
            guard case .observed(let o) = try Web3Webhook.ingest(headers: h, body: b, keys: [Self.key], now: Self.now).1 else { return nil }
            return o
        }
        #expect(try observed(#"{"merchantOrderNo":"A1","status":3,"amount":"","payAmountDisplay":"40"}"#)?.amount == "40")
        #expect(try observed(#"{"merchantOrderNo":"A1","status":3,"amount":"","payAmountDisplay":""}"#)?.amount == nil)
        #expect(try observed(#"{"merchantOrderNo":"A1","status":3,"amount":4e1}"#)?.amount == "40")
        #expect(try observed(#"{"merchantOrderNo":"A1","status":3,"amount":"1.2e-5"}"#)?.amount == "0.000012")
        #expect(try observed(#"{"merchantOrderNo":"A1","status":3,"amount":"40","payAmountMinimal":"n/a"}"#)?.amount == "40")
    }

    @Test("a signed body without merchantOrderNo, with status outside 1-6 or not JSON is a 400 error")
    func badBodies() {
        func check(_ json: String) -> CoreError? {
            let b = bytes(json)
            let h = ["x-pay-timestamp": Self.ts, "x-pay-signature": Web3Webhook.signature(key: Self.key, timestamp: Self.ts, body: b)]
            return coreError { try Web3Webhook.ingest(headers: h, body: b, keys: [Self.key], now: Self.now) }
        }
        #expect(check(#"{"status":3}"#) == .missingOrderReference)
        #expect(check(#"{"merchantOrderNo":"A1","status":7}"#) == .statusOutOfRange("7"))
        #expect(check(#"{"merchantOrderNo":"A1","status":0}"#) == .statusOutOfRange("0"))
        #expect(check(#"{"merchantOrderNo":"A1","status":"3.0"}"#) == .statusOutOfRange("3.0"))
        #expect(check(#"{"merchantOrderNo":"A1"}"#) == .missingField("status"))
        #expect(check(#"{"merchantOrderNo":"bad order/no","status":3}"#) == .invalidMerchantOrderNo("bad order/no"))
        #expect(check("not json")?.reason == "invalid_json")
        #expect(check("[1,2]") == .notAnObject(what: "webhook body"))
        #expect(check("{\"merchantOrderNo\":\"A\u{FFFD}\"}") != nil)
        let nonUTF8: [UInt8] = [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]
        let h = ["x-pay-timestamp": Self.ts, "x-pay-signature": Web3Webhook.signature(key: Self.key, timestamp: Self.ts, body: nonUTF8)]
        #expect(coreError { try Web3Webhook.ingest(headers: h, body: nonUTF8, keys: [Self.key], now: Self.now) } == .notUTF8)
    }

    @Test("a queryOrder response maps to a query observation; a non-zero code is a typed error")
    func query() throws {
        let response = try JSONValue.parse(#"{"code":0,"status":4,"statusText":"completed","txHash":"0xfeed","orderNo":"P1","extra":1}"#)
        let o = try Web3Query.observation(merchantOrderNo: orderNo("SO-1"), response: response, observedAt: t0)
        #expect(o.status == .completed && o.source == .query && o.txHash == "0xfeed" && o.body == nil)
        #expect(o.idempotencyKey.hasPrefix("web3:query:") && o.idempotencyKey.hasSuffix(":\(t0.microseconds)"))
        let again = try Web3Query.observation(merchantOrderNo: orderNo("SO-1"), response: response, observedAt: t0)
        let later = try Web3Query.observation(merchantOrderNo: orderNo("SO-1"), response: response, observedAt: at(60))
        #expect(again.idempotencyKey == o.idempotencyKey && later.idempotencyKey != o.idempotencyKey)
        let otherOrder = try Web3Query.observation(merchantOrderNo: orderNo("SO-2"), response: response, observedAt: t0)
        #expect(otherOrder.idempotencyKey != o.idempotencyKey, "the key names the order")
        let legacy = QueryKey.legacy(of: o.idempotencyKey, orderNo: orderNo("SO-1"))
        #expect(legacy == QueryKey.legacy(of: otherOrder.idempotencyKey, orderNo: orderNo("SO-2")),
                "before the upgrade both orders' reports had one key")
        #expect(legacy.map { $0.hasPrefix("web3:query:") && !$0.contains("SO-1") && $0.hasSuffix(":\(t0.microseconds)") } == true)
        #expect(QueryKey.legacy(of: o.idempotencyKey, orderNo: orderNo("SO-2")) == nil, "another order's key has no legacy form here")
        #expect(QueryKey.legacy(of: "web3:" + String(repeating: "a", count: 64), orderNo: orderNo("SO-1")) == nil)
        #expect(QueryKey.legacy(of: legacy ?? "", orderNo: orderNo("SO-1")) == nil, "a legacy key is not read as a new one")
        let fromBytes = try Web3Query.observation(merchantOrderNo: orderNo("SO-1"), responseBody: response.serializedBytes, observedAt: t0)
        #expect(fromBytes == o)
        #expect(coreError { try Web3Query.observation(merchantOrderNo: orderNo("SO-1"), responseBody: bytes("<html>"), observedAt: t0) }?.reason == "invalid_json")
        let failed = try JSONValue.parse(#"{"code":1001,"msg":"order not found"}"#)
        #expect(coreError { try Web3Query.observation(merchantOrderNo: orderNo("SO-1"), response: failed, observedAt: t0) }
                == .providerQueryFailed(code: "1001", message: "order not found"))
        let other = try JSONValue.parse(#"{"code":0,"status":3,"merchantOrderNo":"SO-2"}"#)
        #expect(coreError { try Web3Query.observation(merchantOrderNo: orderNo("SO-1"), response: other, observedAt: t0) }?.reason == "order_reference_mismatch")
    }

    /// The seed's createOrder request writes `chainId: 2` (the gateway's format); the ledger's
    /// registration gives its ids as strings (http-api.md), so the backend sends "2".
    @Test("the seed's createOrder request and response register an order, taking orderNo as the provider order id")
    func registration() throws {
        let body = bytes(#"{"merchantOrderNo":"SO-20261129-0001","provider":"web3","amount":"40.00","asset":"USDT","chainId":"2","tokenId":"1","providerResponse":{"code":0,"orderNo":"P1764417600123","payAddress":"TXYZ","payAmountDisplay":"40.00","payAmountMinimal":"40000000","chainKey":"tron","msg":"ok"}}"#)
        let r = try OrderRequests.registration(body: body, receivedAt: t0)
        #expect(r.amount == "40.00" && r.asset == "USDT" && r.chainId == "2" && r.tokenId == "1")
        #expect(r.providerOrderId == "P1764417600123")
        #expect(r.idempotencyKey == "register:SO-20261129-0001")
        let same = try OrderRequests.registration(body: bytes(#"{"merchantOrderNo":"SO-20261129-0001","provider":"web3","amount":"40","asset":"USDT","chainId":"2","tokenId":"1","providerResponse":{"code":0,"orderNo":"P1764417600123","payAddress":"TXYZ","payAmountDisplay":"40.00","payAmountMinimal":"40000000","chainKey":"tron","msg":"ok"}}"#), receivedAt: at(5))
        #expect(r.sameContent(as: same))
        let other = try OrderRequests.registration(body: bytes(#"{"merchantOrderNo":"SO-20261129-0001","provider":"web3","amount":"41","asset":"USDT"}"#), receivedAt: at(5))
        #expect(!r.sameContent(as: other))
    }
}
