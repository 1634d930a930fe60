import Testing
import LedgerCore

/// The issue's list of bad inputs, each failing with a typed error that names the problem.
@Suite("bad input fails with a typed error that names the problem")
struct BadInputTests {
    static let key = "k"
    static let ts = "1764417600"
    static let now = Timestamp(seconds: 1_764_417_600)

    static func web3(_ body: String, ts: String = ts, signature: String? = nil, now: Timestamp = now) -> CoreError? {
        let b = bytes(body)
        let sig = signature ?? Web3Webhook.signature(key: key, timestamp: ts, body: b)
        return coreError { try Web3Webhook.ingest(headers: ["x-pay-timestamp": ts, "x-pay-signature": sig], body: b, keys: [key], now: now) }
    }

    static let good = #"{"merchantOrderNo":"SO-1","status":3}"#

    @Test("each listed case gives its own error, reason label and HTTP class", arguments: [
        ("wrong signature", web3(good, signature: String(repeating: "ab", count: 32)), "bad_signature", true),
        ("stale timestamp", web3(good, now: at(3600)), "stale_timestamp", true),
        ("future timestamp", web3(good, now: at(-3600)), "future_timestamp", true),
        ("missing order reference", web3(#"{"status":3}"#), "missing_order_reference", false),
        ("status outside 1-6", web3(#"{"merchantOrderNo":"SO-1","status":8}"#), "status_out_of_range", false),
        ("not JSON", web3("status=3&merchantOrderNo=SO-1"), "invalid_json", false),
        ("invalid merchantOrderNo", web3(#"{"merchantOrderNo":"SO 1; DROP TABLE","status":3}"#), "invalid_merchant_order_no", false),
    ] as [(String, CoreError?, String, Bool)])
    func listedCases(name: String, error: CoreError?, reason: String, unauthenticated: Bool) {
        #expect(error?.reason == reason, "\(name)")
        #expect(error?.isUnauthenticated == unauthenticated, "\(name)")
        #expect((error?.message.count ?? 0) > 20, "\(name) should explain itself")
    }

    @Test("a signed delivery whose order and status read is recorded, a field it cannot read left out of the mapped fields (the raw body keeps it): 400 is for a body without its order or status")
    func unreadableFieldsLeftOut() throws {
        func observed(_ body: String) throws -> StatusObservation {
            let b = bytes(body)
            let sig = Web3Webhook.signature(key: Self.key, timestamp: Self.ts, body: b)
            let (_, event) = try Web3Webhook.ingest(headers: ["x-pay-timestamp": Self.ts, "x-pay-signature": sig], body: b, keys: [Self.key], now: Self.now)
            guard case .observed(let o) = event else { throw CoreError.missingField("an observation") }
            return o
        }
        // An amount that is no plain decimal, but short text, is kept as written: rule 6 then
        // flags it (it cannot be compared), rather than a wrong amount passing unseen.
        for (amount, kept) in [(#""4O""#, "4O"), (#""1e999""#, "1e999"), (#""-40""#, "-40"), ("-40", "-40")] {
            let o = try observed(#"{"merchantOrderNo":"SO-1","status":3,"amount":\#(amount),"payAmountDisplay":"40.00"}"#)
            #expect(o.status == .paid && o.amount == kept && o.leftOut == nil, "\(amount): \(o)")
        }
        // Longer, or no string or number: left out, and the fallback is read.
        for amount in ["\"\(String(repeating: "9", count: 100))\"", #"{"v":40}"#, "true", #""4\u00010""#] {
            let o = try observed(#"{"merchantOrderNo":"SO-1","status":3,"amount":\#(amount),"payAmountDisplay":"40.00"}"#)
            #expect(o.status == .paid && o.amount == "40.00", "\(amount): the fallback is read: \(o)")
            #expect(o.leftOut?.arrayValue?.first?["path"]?.stringValue == "amount", "\(amount): \(String(describing: o.leftOut))")
            let alone = try observed(#"{"merchantOrderNo":"SO-1","status":3,"amount":\#(amount)}"#)
            #expect(alone.status == .paid && alone.amount == nil, "\(amount): \(alone)")
        }
        let odd = try observed(#"{"merchantOrderNo":"SO-1","status":3,"amount":"40","tokenSymbol":"\#(String(repeating: "T", count: 65))","txHash":{"h":1},"orderNo":[1]}"#)
        #expect(odd.amount == "40" && odd.asset == nil && odd.txHash == nil && odd.providerOrderId == nil, "\(odd)")
        // The event's metadata says what its parsed form lacks, and why.
        let noted = odd.leftOut?.arrayValue ?? []
        #expect(noted.compactMap { $0["path"]?.stringValue } == ["tokenSymbol", "txHash", "orderNo"], "\(noted)")
        #expect(noted.allSatisfy { $0["reason"]?.stringValue?.hasSuffix("left out of the mapped fields") == true }, "\(noted)")
        #expect(try observed(#"{"merchantOrderNo":"SO-1","status":3,"amount":"40"}"#).leftOut == nil)
        // The order and the status are what a delivery must have.
        #expect(Self.web3(#"{"merchantOrderNo":"SO-1","status":"paid"}"#)?.reason == "status_out_of_range")
        #expect(Self.web3(#"{"status":3,"amount":"4O"}"#)?.reason == "missing_order_reference")
    }

    @Test("bytes that are not UTF-8 are 'not UTF-8', for webhooks and API requests alike")
    func notUTF8() {
        let b: [UInt8] = [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]
        let sig = Web3Webhook.signature(key: Self.key, timestamp: Self.ts, body: b)
        #expect(coreError { try Web3Webhook.ingest(headers: ["x-pay-timestamp": Self.ts, "x-pay-signature": sig], body: b, keys: [Self.key], now: Self.now) } == .notUTF8)
        #expect(coreError { try OrderRequests.registration(body: b, receivedAt: t0) } == .notUTF8)
        #expect(coreError { try ClientEventRequest.parse(merchantOrderNo: orderNo("A"), body: b, receivedAt: t0) } == .notUTF8)
    }

    @Test("an unknown Banxa status names the status")
    func unknownBanxaStatus() {
        let b = bytes(#"{"external_id":"SO-1","status":"lostInSpace"}"#)
        let auth = "Bearer key:" + BanxaWebhook.signature(secret: "s", nonce: "1764417600000", body: b) + ":1764417600000"
        let e = coreError { try BanxaWebhook.ingest(headers: ["authorization": auth], body: b, apiKey: "key", secrets: ["s"], now: Self.now) }
        #expect(e == .unknownBanxaStatus("lostInSpace"))
        #expect(e?.message.contains("lostInSpace") == true && e?.isUnauthenticated == false)
    }

    @Test("API request bodies name the field that is missing or wrong")
    func requestFields() {
        func reg(_ json: String) -> CoreError? { coreError { try OrderRequests.registration(body: bytes(json), receivedAt: t0) } }
        #expect(reg(#"{"provider":"web3","amount":"1","asset":"USDT"}"#) == .missingOrderReference)
        #expect(reg(#"{"merchantOrderNo":"A","provider":"web3","asset":"USDT"}"#) == .missingField("amount"))
        #expect(reg(#"{"merchantOrderNo":"A","provider":"web3","amount":"1"}"#) == .missingField("asset"))
        #expect(reg(#"{"merchantOrderNo":"A","provider":"web 3","amount":"1","asset":"X"}"#)?.reason == "invalid_field")
        #expect(reg(#"{"merchantOrderNo":"A","provider":"web3","amount":"-1","asset":"X"}"#)?.reason == "invalid_field")
        #expect(reg(#"{"merchantOrderNo":"A","provider":"web3","amount":true,"asset":"X"}"#)?.reason == "invalid_field")
        #expect(reg(#"{"merchantOrderNo":"\#(String(repeating: "a", count: 65))","provider":"web3","amount":"1","asset":"X"}"#)?.reason == "invalid_merchant_order_no")
        func ce(_ json: String) -> CoreError? { coreError { try ClientEventRequest.parse(merchantOrderNo: orderNo("A"), body: bytes(json), receivedAt: t0) } }
        #expect(ce(#"{"provider":"web3","callback":"x","clientEventId":"not-a-uuid"}"#)?.reason == "invalid_field")
        #expect(ce(#"{"provider":"web3","callback":"x"}"#) == .missingField("clientEventId"))
        #expect(ce(#"{"provider":"web3","callback":"x","clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d","occurredAt":"yesterday"}"#)?.reason == "invalid_field")
        // Callback names are providers.md's, whatever the provider.
        #expect(ce(#"{"provider":"web3","callback":"anything","payload":{},"clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#)
                == .unknownCallback(provider: "web3", callback: "anything"))
        #expect(ce(#"{"provider":"acme","callback":"close","payload":{"x":1},"clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#) == nil)
        func obs(_ json: String) -> CoreError? { coreError { try OrderRequests.observation(merchantOrderNo: orderNo("A"), body: bytes(json), receivedAt: t0) } }
        #expect(obs(#"{"provider":"acme","response":{"state":"paid"}}"#) == .missingField("status"))
        #expect(obs(#"{"provider":"acme","response":{"status":0}}"#) == .statusOutOfRange("0"))
        #expect(obs(#"{"provider":"acme","response":{"status":3.5}}"#) == .statusOutOfRange("3.5"))
        #expect(obs(#"{"provider":"acme","response":"paid"}"#) == .notAnObject(what: "response"))
        #expect(obs(#"{"provider":"acme"}"#) == .missingField("response"))
        #expect(obs(#"{"provider":"banxa","response":{"status":"teleported"}}"#) == .unknownBanxaStatus("teleported"))
        #expect(obs(#"{"provider":"web3","response":{"code":500,"msg":"busy"}}"#) == .providerQueryFailed(code: "500", message: "busy"))
    }

    @Test("a string holding \\u0000 is refused at the door with a clear message")
    func nulRefused() {
        let e = coreError { try OrderRequests.registration(body: bytes(#"{"merchantOrderNo":"A","provider":"web3","amount":"1","asset":"US\u0000DT"}"#), receivedAt: t0) }
        guard case .invalidJSON(let j)? = e else { Issue.record("expected invalidJSON, got \(String(describing: e))"); return }
        #expect(j.kind == .nulCharacter && e!.message.contains("\\u0000"))
    }
}
