import Testing
import LedgerCore

/// Fixtures in the shape of seed 000 (Banxa iOS SDK) and providers.md (webhook v2).
@Suite("banxa adapter (seed 000)")
struct BanxaSeedTests {
    static let apiKey = "banxa-api-key"
    static let secret = "banxa-secret-1"
    static let nonce = "1764417600000"
    static let body = bytes(#"{"order_id":"8f3b2c1a","status":"complete","status_date":"2024-01-31 12:48:36","created_at":"2024-01-31 12:40:00","updated_at":"2024-01-31 12:48:36","external_id":"SO-20261129-0002","order_type":"CRYPTO-BUY","crypto_coin":"ETH","crypto_blockchain":"ETH","crypto_amount":"0.01234","fiat_currency":"EUR","fiat_amount":"40","payment_method":"debit-credit-card","processing_fee":"1.2","network_fee":"0.5","transaction_hash":"0xabc123","metadata":null}"#)
    /// python3 -c 'import hmac,hashlib; print(hmac.new(b"banxa-secret-1", b"POST\n/v1/webhooks/banxa\n1764417600000\n"+BODY, hashlib.sha256).hexdigest())'
    static let expectedSignature = "fdcba6e8f968d84759214e4b0d2102a8e698827b9d6642fea7a389135461d779"
    static let now = Timestamp(seconds: 1_764_417_600)

    static func headers(key: String = apiKey, sig: String = expectedSignature, nonce: String = nonce) -> [String: String] {
        ["authorization": "Bearer \(key):\(sig):\(nonce)"]
    }

    static func signed(_ json: String, nonce: String = nonce) -> ([String: String], [UInt8]) {
        let b = bytes(json)
        return (headers(sig: BanxaWebhook.signature(secret: secret, nonce: nonce, body: b), nonce: nonce), b)
    }

    @Test("the signature over POST, path, nonce and body matches python's HMAC")
    func signatureVector() {
        #expect(BanxaWebhook.signature(secret: Self.secret, nonce: Self.nonce, body: Self.body) == Self.expectedSignature)
    }

    @Test("Authorization credentials split from the right: a key holding ':' verifies, and its signature and nonce are found")
    func credentialsFromTheRight() throws {
        let parts = try #require(BanxaWebhook.credentials(authorization: "Bearer a:b:\(Self.expectedSignature):\(Self.nonce)"))
        #expect(parts.key == "a:b" && parts.signature == Self.expectedSignature && parts.nonce == Self.nonce)
        #expect(BanxaWebhook.credentials(authorization: "Bearer key:sig") == nil)
        #expect(BanxaWebhook.credentials(authorization: "Basic a:b:c") == nil)
        let verification = try BanxaWebhook.verify(headers: Self.headers(key: "a:b"), body: Self.body, apiKey: "a:b",
                                                   secrets: [Self.secret], now: Self.now)
        #expect(verification.keyIndex == 0)
    }

    @Test("a signed v2 webhook maps to a status observation dated by status_date read as UTC")
    func ingest() throws {
        let (v, event) = try BanxaWebhook.ingest(headers: Self.headers(), body: Self.body, apiKey: Self.apiKey,
                                                 secrets: ["old-secret", Self.secret], now: Self.now)
        #expect(v.keyIndex == 1)
        guard case .observed(let o) = event else { Issue.record("not an observation"); return }
        #expect(o.merchantOrderNo.value == "SO-20261129-0002")
        #expect(o.status == .completed && o.providerStatus == "complete")
        #expect(o.observedAt == Timestamp.parse("2024-01-31T12:48:36Z"))
        #expect(o.amount == "0.01234" && o.asset == "ETH" && o.fiatAmount == "40" && o.fiatCurrency == "EUR")
        #expect(o.txHash == "0xabc123" && o.providerOrderId == "8f3b2c1a")
        #expect(o.body == nil, "the body (status_date as sent included) is the event's raw bytes")
        #expect(event.idempotencyKey.hasPrefix("banxa:"))
    }

    @Test("every status in the providers.md table maps as listed; refunded is an adjustment")
    func statusTable() {
        let table: [(String, BanxaStatusMeaning)] = [
            ("pendingPayment", .status(.awaitingPayment)), ("waitingPayment", .status(.confirming)),
            ("inProgress", .status(.confirming)), ("paymentReceived", .status(.paid)),
            ("cryptoTransferred", .status(.paid)), ("coinTransferred", .status(.paid)), ("complete", .status(.completed)),
            ("expired", .status(.expired)), ("cancelled", .status(.expired)), ("declined", .status(.expired)),
            ("extraVerification", .status(.manualReview)), ("refunded", .refund),
        ]
        for (name, meaning) in table { #expect(BanxaWebhook.meaning(of: name) == meaning, "\(name)") }
        #expect(BanxaWebhook.meaning(of: "PAYMENT_RECEIVED") == .status(.paid))
        #expect(BanxaWebhook.meaning(of: "coinsTransferred") == .status(.paid))
        #expect(BanxaWebhook.meaning(of: "completed") == nil)
    }

    @Test("status_date in its loose forms is read as UTC")
    func looseDates() throws {
        for (text, expected) in [("2024-01-31 12:48:36", "2024-01-31T12:48:36Z"), ("2024-01-31T12:48:36", "2024-01-31T12:48:36Z"),
                                 ("2024-01-31T12:48:36Z", "2024-01-31T12:48:36Z"), ("2024-01-31 12:48:36.25", "2024-01-31T12:48:36.25Z")] {
            let (h, b) = Self.signed(#"{"external_id":"SO-1","status":"paymentReceived","status_date":"\#(text)"}"#)
            let (_, e) = try BanxaWebhook.ingest(headers: h, body: b, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now)
            #expect(e.observedAt.rfc3339 == expected, "\(text)")
        }
        let (h, b) = Self.signed(#"{"external_id":"SO-1","status":"paymentReceived","status_date":"yesterday"}"#)
        let (_, e) = try BanxaWebhook.ingest(headers: h, body: b, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now)
        #expect(e.observedAt == Self.now)
        // No string, or one too long to be a time: unreadable as well, and the signed delivery is kept.
        for odd in [#"1706705316"#, #"{"t":1}"#, "\"\(String(repeating: "9", count: 80))\""] {
            let (h2, b2) = Self.signed(#"{"external_id":"SO-1","status":"paymentReceived","updated_at":"2024-01-31 12:00:00","status_date":\#(odd)}"#)
            let (_, e2) = try BanxaWebhook.ingest(headers: h2, body: b2, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now)
            #expect(e2.observedAt.rfc3339 == "2024-01-31T12:00:00Z", "\(odd): updated_at is read instead")
        }
    }

    @Test("a refunded webhook becomes a refund adjustment in fiat")
    func refund() throws {
        let (h, b) = Self.signed(#"{"external_id":"SO-1","status":"refunded","status_date":"2024-02-01 10:00:00","fiat_amount":"40.00","fiat_currency":"EUR","crypto_amount":"0.01","crypto_coin":"ETH"}"#)
        let (_, e) = try BanxaWebhook.ingest(headers: h, body: b, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now)
        guard case .adjustment(let a) = e else { Issue.record("not an adjustment"); return }
        #expect(a.kind == "refund" && a.amount == "40.00" && a.asset == "EUR" && e.type == "AdjustmentRecorded")
    }

    @Test("a signed Banxa delivery with fields it cannot read is recorded with them left out; the raw body keeps them")
    func unreadableFieldsLeftOut() throws {
        let (h, b) = Self.signed(#"{"external_id":"SO-1","status":"complete","fiat_amount":"forty","fiat_currency":"EUR","crypto_amount":-1,"crypto_coin":{"c":"ETH"},"order_id":[1],"transaction_hash":true}"#)
        let (_, e) = try BanxaWebhook.ingest(headers: h, body: b, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now)
        guard case .observed(let o) = e else { Issue.record("not an observation"); return }
        // The amounts that are short text are kept as written, for rule 6 to flag; the rest is left out.
        #expect(o.status == .completed && o.fiatAmount == "forty" && o.fiatCurrency == "EUR" && o.amount == nil && o.asset == nil
                && o.providerOrderId == nil && o.txHash == nil, "\(o)")
        #expect(o.leftOut?.arrayValue?.compactMap { $0["path"]?.stringValue }
                == ["crypto_coin", "order_id", "transaction_hash"], "\(String(describing: o.leftOut))")
    }

    @Test("microsecond nonces are accepted; stale, future and malformed nonces are not")
    func nonces() throws {
        let (h, b) = Self.signed(#"{"external_id":"SO-1","status":"complete"}"#, nonce: "1764417600000000")
        #expect(try BanxaWebhook.verify(headers: h, body: b, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now).signedAt == Self.now)
        #expect(coreError { try BanxaWebhook.verify(headers: Self.headers(), body: Self.body, apiKey: Self.apiKey, secrets: [Self.secret], now: at(301)) }?.reason == "stale_timestamp")
        #expect(coreError { try BanxaWebhook.verify(headers: Self.headers(), body: Self.body, apiKey: Self.apiKey, secrets: [Self.secret], now: at(-301)) }?.reason == "future_timestamp")
        let (h2, b2) = Self.signed(#"{"external_id":"SO-1","status":"complete"}"#, nonce: "1764417600")
        #expect(coreError { try BanxaWebhook.verify(headers: h2, body: b2, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now) }?.reason == "malformed_timestamp")
    }

    @Test("a wrong key, wrong signature or malformed header is unauthenticated")
    func badAuth() {
        func reason(_ h: [String: String]) -> String? {
            coreError { try BanxaWebhook.verify(headers: h, body: Self.body, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now) }?.reason
        }
        #expect(reason(Self.headers(key: "someone-else")) == "unknown_api_key")
        #expect(reason(Self.headers(sig: String(repeating: "0", count: 64))) == "bad_signature")
        #expect(reason([:]) == "missing_signature")
        #expect(reason(["authorization": "Basic abc"]) == "malformed_signature")
        #expect(reason(["authorization": "Bearer onlykey"]) == "malformed_signature")
        #expect(coreError { try BanxaWebhook.verify(headers: Self.headers(), body: Self.body, apiKey: Self.apiKey, secrets: [Self.secret], path: "/other", now: Self.now) } == .badSignature)
    }

    @Test("an unknown Banxa status or a missing external_id is a typed error")
    func badBodies() {
        func check(_ json: String) -> CoreError? {
            let (h, b) = Self.signed(json)
            return coreError { try BanxaWebhook.ingest(headers: h, body: b, apiKey: Self.apiKey, secrets: [Self.secret], now: Self.now) }
        }
        #expect(check(#"{"external_id":"SO-1","status":"teleported"}"#) == .unknownBanxaStatus("teleported"))
        #expect(check(#"{"status":"complete"}"#) == .missingOrderReference)
        #expect(check(#"{"external_id":"SO 1","status":"complete"}"#) == .invalidMerchantOrderNo("SO 1"))
        #expect(check(#"{"external_id":"SO-1"}"#) == .missingField("status"))
    }

    @Test("every SDK callback is accepted: checkout result, each APIError case, dismiss")
    func sdkCallbacks() throws {
        func relay(_ callback: String, _ payload: String) throws -> ClientSignal {
            try ClientEventRequest.parse(merchantOrderNo: orderNo("SO-1"), body: bytes(#"{"provider":"banxa","callback":"\#(callback)","payload":\#(payload),"clientEventId":"6F1C2A4E-3F1D-4C8A-9E2B-5D6F7A8B9C0D","occurredAt":"2026-11-29T12:00:00Z","sdkVersion":"1.0.0"}"#), receivedAt: t0)
        }
        let done = try relay("banxaDidCompleteCheckout", #"{"paymentId":"pay_1","orderId":"8f3b2c1a","status":"succeeded"}"#)
        #expect(done.payload["paymentId"] == .string("pay_1") && done.clientEventId == "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d")
        #expect(LedgerEvent.clientSignal(done).idempotencyKey == "client:order-SO-1:6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d")
        _ = try relay("banxaDidCompleteCheckout", #"{"rawQuery":"status=success&orderId=1"}"#)
        let errors: [(String, BanxaAPIError)] = [
            (#"{"error":"invalidURL"}"#, .invalidURL), (#"{"error":"serverError","code":502}"#, .serverError(502)),
            (#"{"error":"unauthorized"}"#, .unauthorized), (#"{"error":"decodingFailed","message":"keyNotFound"}"#, .decodingFailed("keyNotFound")),
            (#"{"error":"networkUnavailable"}"#, .networkUnavailable),
            (#"{"error":"missingCredentials","fields":["apiKey","partnerID"]}"#, .missingCredentials(["apiKey", "partnerID"])),
            (#"{"error":"sdkNotConfigured"}"#, .sdkNotConfigured), (#"{"error":"checkoutFailed","rawQuery":"status=failed"}"#, .checkoutFailed("status=failed")),
            (#"{"error":"checkoutFailed"}"#, .checkoutFailed(nil)), (#"{"error":"unknown","message":"boom"}"#, .unknown("boom")),
        ]
        for (json, expected) in errors {
            let s = try relay("banxaDidFail", json)
            #expect(try BanxaAPIError(json: s.payload) == expected, "\(json)")
            #expect(s.payload == expected.json)
        }
        #expect(try relay("banxaDidDismiss", "null").payload == .object([]))
        #expect(coreError { try relay("banxaDidFail", #"{"error":"serverError"}"#) }?.reason == "callback_payload_mismatch")
        #expect(coreError { try relay("banxaDidFail", #"{"error":"gremlins"}"#) }?.reason == "callback_payload_mismatch")
        // The SDK passes no data with a dismiss; what the app adds of its own is kept (InputRuleTests).
        #expect(try relay("banxaDidDismiss", #"{"x":1}"#).payload == .object([("x", .number("1"))]))
        #expect(coreError { try relay("banxaDidDismiss", "[1]") }?.reason == "callback_payload_mismatch")
        #expect(coreError { try relay("banxaDidExplode", "{}") }?.reason == "unknown_callback")
        #expect(coreError { try relay("banxaDidCompleteCheckout", #"{"paymentId":5}"#) }?.reason == "callback_payload_mismatch")
    }

    @Test("a Banxa order the backend fetched maps as a query observation")
    func queryObservation() throws {
        let body = bytes(#"{"provider":"banxa","response":{"data":{"order":{"id":"8f3b2c1a","status":"paymentReceived","status_date":"2024-01-31 12:48:36","external_id":"SO-1","crypto_amount":"0.5","crypto_coin":"ETH"}}}}"#)
        let e = try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: body, receivedAt: t0)
        guard case .observed(let o) = e else { Issue.record("not an observation"); return }
        #expect(o.source == .query && o.status == .paid && o.observedAt.rfc3339 == "2024-01-31T12:48:36Z")
        let wrong = bytes(#"{"provider":"banxa","response":{"status":"complete","external_id":"SO-2"}}"#)
        #expect(coreError { try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: wrong, receivedAt: t0) }?.reason == "order_reference_mismatch")
    }

    @Test("the same Banxa order reported twice, later, is a new observation (lifecycle rule 7): its key uses the arrival time, or the observedAt given; its time stays status_date")
    func queryReportedAgainIsNew() throws {
        let body = bytes(#"{"provider":"banxa","response":{"data":{"order":{"id":"8f3b2c1a","status":"complete","status_date":"2024-01-31 12:48:36","external_id":"SO-1"}}}}"#)
        let first = try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: body, receivedAt: t0)
        let laterTime = Timestamp(microseconds: t0.microseconds + 30_000_000)
        let later = try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: body, receivedAt: laterTime)
        #expect(first.idempotencyKey != later.idempotencyKey)
        #expect(first.observedAt.rfc3339 == "2024-01-31T12:48:36Z" && later.observedAt == first.observedAt)
        // The same report at the same arrival time, or with the same observedAt given: the same key.
        #expect(try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: body, receivedAt: t0).idempotencyKey == first.idempotencyKey)
        let given = bytes(#"{"provider":"banxa","observedAt":"2024-02-01T00:00:00Z","response":{"status":"complete","status_date":"2024-01-31 12:48:36","external_id":"SO-1"}}"#)
        #expect(try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: given, receivedAt: t0).idempotencyKey
                == OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: given, receivedAt: laterTime).idempotencyKey)
    }

    @Test("a Banxa report whose status the backend already mapped to a number is checked against external_id and dated by status_date, as the others are")
    func numericStatusReport() throws {
        let paid = bytes(#"{"provider":"banxa","response":{"external_id":"SO-1","status":3,"status_date":"2024-01-31 12:48:36"}}"#)
        let e = try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: paid, receivedAt: t0)
        guard case .observed(let o) = e else { Issue.record("not an observation"); return }
        #expect(o.status == .paid && o.observedAt.rfc3339 == "2024-01-31T12:48:36Z")
        let other = bytes(#"{"provider":"banxa","response":{"external_id":"B-9","status":3}}"#)
        #expect(coreError { try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: other, receivedAt: t0) }?.reason == "order_reference_mismatch")
    }

    @Test("a status_date beyond the clock tolerance after receipt is not the observation's time: the receipt time is, by webhook and by report alike")
    func futureStatusDate() throws {
        let future = #"{"status":"paymentReceived","status_date":"2099-01-01 00:00:00","external_id":"SO-1"}"#
        let report = try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"),
                                                   body: bytes(#"{"provider":"banxa","response":"# + future + "}"), receivedAt: t0)
        #expect(report.observedAt == t0)
        let webhook = try BanxaWebhook.event(body: bytes(future), verification: WebhookVerification(keyIndex: 0, keyId: "k", signedAt: t0),
                                             receivedAt: t0)
        #expect(webhook.observedAt == t0)
        // Within the tolerance, it is kept.
        let near = try BanxaWebhook.event(body: bytes(#"{"status":"paymentReceived","status_date":"2025-11-29 12:03:20","external_id":"SO-1"}"#),
                                          verification: WebhookVerification(keyIndex: 0, keyId: "k", signedAt: t0), receivedAt: t0)
        #expect(near.observedAt.microseconds == t0.microseconds + 200_000_000)
    }

    @Test("a Banxa payment with a crypto amount but no coin raises no amount mismatch on an order registered in fiat")
    func cryptoAmountWithoutCoin() throws {
        let no = orderNo("SO-7")
        let registration = try OrderRequests.registration(
            body: bytes(#"{"merchantOrderNo":"SO-7","provider":"banxa","amount":"40","asset":"EUR"}"#), receivedAt: t0)
        let paid = try OrderRequests.observation(merchantOrderNo: no, body: bytes(
            #"{"provider":"banxa","response":{"status":"paymentReceived","status_date":"2024-01-31 12:48:36","external_id":"SO-7","crypto_amount":"0.01"}}"#),
            receivedAt: t0)
        let s = OrderState.replay(no, [RecordedEvent(event: .registered(registration), position: 1, recordedAt: t0),
                                       RecordedEvent(event: paid, position: 2, recordedAt: t0)])
        #expect(s.paid)
        #expect(!s.attention)
        #expect(s.conflicts.isEmpty)
        // With the coin named, a different amount in that coin is still no mismatch against a EUR order,
        // and a EUR fiat amount that differs is one.
        let wrongFiat = try OrderRequests.observation(merchantOrderNo: no, body: bytes(
            #"{"provider":"banxa","response":{"status":"paymentReceived","status_date":"2024-01-31 12:48:36","external_id":"SO-7","crypto_amount":"0.01","crypto_coin":"ETH","fiat_amount":"41","fiat_currency":"EUR"}}"#),
            receivedAt: t0)
        let t = OrderState.replay(no, [RecordedEvent(event: .registered(registration), position: 1, recordedAt: t0),
                                       RecordedEvent(event: wrongFiat, position: 2, recordedAt: t0)])
        #expect(t.attention && t.conflicts.first?.kind == .amountMismatch)
    }
}
