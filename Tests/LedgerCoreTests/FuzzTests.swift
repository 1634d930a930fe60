import Testing
import LedgerCore

/// Random and mutated inputs for every parser: each must answer with a value or
/// a typed error, never crash. (A trap would end the test process.)
@Suite("fuzz: every parser answers or fails with a typed error")
struct FuzzTests {
    static let iterations = 100_000

    static let tokens: [[UInt8]] = [
        "\"", "{", "}", "[", "]", ":", ",", "\\", "\\u0000", "\\ud800", "\\u00e9", "1e999", "-", "0", ".", "e",
        "null", "true", "99999999999999999999999999999999999999999999999999999999999999999999",
        "\"status\":", "\"merchantOrderNo\":", "\"external_id\":", "\"amount\":", "7", "3", "\"refunded\"",
        "\"payload\":", "\"callback\":", "\"clientEventId\":", " ", "\n", "\t",
    ].map { Array($0.utf8) } + [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x00], [0xe2, 0x82]]

    static let jsonish = Array("{}[]\":,0123456789.eE-+ tfnul\\ab".utf8)

    /// Mutates valid input: flips, inserts, deletes, duplicates, splices tokens, truncates.
    struct Mutator {
        var rng: SplitMix64
        let seeds: [[UInt8]]

        mutating func next() -> [UInt8] {
            if Int.random(in: 0..<8, using: &rng) == 0 {
                // Pure random bytes, sometimes restricted to JSON-ish ASCII.
                let n = Int.random(in: 0...48, using: &rng)
                let ascii = Bool.random(using: &rng)
                return (0..<n).map { _ in ascii ? FuzzTests.jsonish.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng) }
            }
            var b = seeds.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i = b.isEmpty ? 0 : Int.random(in: 0..<b.count, using: &rng)
                switch Int.random(in: 0..<7, using: &rng) {
                case 0 where !b.isEmpty: b[i] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
                case 1: b.insert(UInt8.random(in: 0...255, using: &rng), at: min(i, b.count))
                case 2 where !b.isEmpty: b.removeSubrange(i..<min(b.count, i + Int.random(in: 1...8, using: &rng)))
                case 3 where !b.isEmpty:
                    let chunk = Array(b[i..<min(b.count, i + Int.random(in: 1...16, using: &rng))])
                    b.insert(contentsOf: chunk, at: Int.random(in: 0...b.count, using: &rng))
                case 4: b.insert(contentsOf: FuzzTests.tokens.randomElement(using: &rng)!, at: min(i, b.count))
                case 5 where !b.isEmpty: b.removeSubrange(i...)
                default: if !b.isEmpty { b[i] = FuzzTests.tokens.randomElement(using: &rng)!.first! }
                }
            }
            return b
        }
    }

    static let web3Body = #"{"merchantOrderNo":"SO-1","orderNo":"P1","status":3,"statusText":"paid","txHash":"0x9f","payAmountMinimal":"40000000","payAmountDisplay":"40.00","amount":"40","chainKey":"tron","chainId":2,"tokenId":1}"#
    static let banxaBody = #"{"order_id":"8f3b","status":"complete","status_date":"2024-01-31 12:48:36","external_id":"SO-1","crypto_coin":"ETH","crypto_amount":"0.01","fiat_currency":"EUR","fiat_amount":"40","transaction_hash":"0xabc","metadata":null}"#
    static let clientBody = #"{"provider":"banxa","callback":"banxaDidFail","payload":{"error":"serverError","code":502},"clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d","occurredAt":"2026-11-29T12:00:00Z"}"#
    static let bankpayBody = #"{"provider":"bankpay","callback":"bankAccountAdded","payload":{"type":"bankAccountAdded","data":{"intent_id":"ei_1"}},"clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#
    static let registrationBody = #"{"merchantOrderNo":"SO-1","provider":"web3","amount":"40.00","asset":"USDT","chainId":"2","tokenId":"1","fiatCurrency":"EUR","fiatAmount":"37","providerResponse":{"code":0,"orderNo":"P1"}}"#
    static let observationBody = #"{"provider":"web3","response":{"code":0,"status":4,"statusText":"completed","txHash":"0x1"},"observedAt":"2026-11-29T12:00:00Z"}"#
    static let genericBody = #"{"provider":"acme-pay","response":{"status":"3","amount":"1.5","asset":"USD","orderNo":"A"}}"#
    static let banxaQueryBody = #"{"provider":"banxa","response":{"data":{"order":{"status":"refunded","external_id":"SO-1","fiat_amount":"4"}}}}"#
    static let correctionBody = #"{"status":5,"reason":"cancelled by phone","correctionId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#

    @Test("the JSON parser survives 100,000 random and mutated inputs, and what it accepts re-serialises to itself")
    func json() {
        var m = Mutator(rng: SplitMix64(seed: 1), seeds: [Self.web3Body, Self.banxaBody, Self.clientBody, Self.registrationBody, "[1,[2,[3]],\"\\u00e9\"]"].map { Array($0.utf8) })
        var accepted = 0
        for _ in 0..<Self.iterations {
            let input = m.next()
            guard let v = try? JSONParser.parse(input) else { continue }
            accepted += 1
            #expect((try? JSONParser.parse(v.serializedBytes)) == v)
        }
        #expect(accepted > 1_000)
    }

    @Test("ExactDecimal survives 100,000 random and mutated amount strings, and its output re-parses to the same value")
    func decimals() {
        var m = Mutator(rng: SplitMix64(seed: 2), seeds: ["40.00", "0.000000000000000001", "-12345678901234567890.5", "1"].map { Array($0.utf8) })
        for _ in 0..<Self.iterations {
            let text = String(decoding: m.next(), as: UTF8.self)
            if let d = try? ExactDecimal(parsing: text) {
                #expect((try? ExactDecimal(parsing: d.description)) == d)
            }
        }
    }

    @Test("the web3 webhook survives 100,000 mutated bodies (signed, so parsing is reached) and mutated headers")
    func web3() {
        var m = Mutator(rng: SplitMix64(seed: 3), seeds: [Array(Self.web3Body.utf8)])
        var hm = Mutator(rng: SplitMix64(seed: 33), seeds: ["1764417600", "1764417600123", "4f358899307b0ee0e266ea4821ae60b9ea144a6945456ba305cbea10ddc9b7dd"].map { Array($0.utf8) })
        let now = Timestamp(seconds: 1_764_417_600)
        var accepted = 0
        for n in 0..<Self.iterations {
            let body = m.next()
            let headers: [String: String]
            if n % 10 == 0 {
                headers = ["x-pay-timestamp": String(decoding: hm.next(), as: UTF8.self), "x-pay-signature": String(decoding: hm.next(), as: UTF8.self)]
            } else {
                headers = ["x-pay-timestamp": "1764417600", "x-pay-signature": Web3Webhook.signature(key: "k", timestamp: "1764417600", body: body)]
            }
            if let (_, event) = try? Web3Webhook.ingest(headers: headers, body: body, keys: ["k"], now: now) {
                accepted += 1
                #expect(storedRoundTrip(event) == event)
            }
        }
        #expect(accepted > 1_000, "the mutations must still reach the mapping, not only the signature check")
    }

    @Test("the banxa webhook survives 100,000 mutated bodies (signed) and mutated Authorization headers")
    func banxa() {
        var m = Mutator(rng: SplitMix64(seed: 4), seeds: [Array(Self.banxaBody.utf8)])
        var hm = Mutator(rng: SplitMix64(seed: 44), seeds: [Array("Bearer key:fdcba6e8f968d84759214e4b0d2102a8e698827b9d6642fea7a389135461d779:1764417600000".utf8)])
        let now = Timestamp(seconds: 1_764_417_600)
        var accepted = 0
        for n in 0..<Self.iterations {
            let body = m.next()
            let auth = n % 10 == 0
                ? String(decoding: hm.next(), as: UTF8.self)
                : "Bearer key:" + BanxaWebhook.signature(secret: "s", nonce: "1764417600000", body: body) + ":1764417600000"
            if let (_, event) = try? BanxaWebhook.ingest(headers: ["authorization": auth], body: body, apiKey: "key", secrets: ["s"], now: now) {
                accepted += 1
                #expect(storedRoundTrip(event) == event)
            }
        }
        #expect(accepted > 1_000, "the mutations must still reach the mapping, not only the signature check")
    }

    @Test("a web3 or Banxa header set verifies exactly when it is correctly signed in the time window, and each flaw gives its own CoreError, 100,000 each")
    func signatureHeaders() {
        var cases = SignedHeaderCases(rng: SplitMix64(seed: 34))
        var outcomes: [String: Int] = [:]
        for _ in 0..<Self.iterations {
            for (provider, c) in [("web3", cases.web3()), ("banxa", cases.banxa())] {
                let got: Result<WebhookVerification, CoreError> = provider == "web3"
                    ? Result { () throws(CoreError) in
                        try Web3Webhook.verify(headers: c.headers, body: c.body, keys: SignedHeaderCases.web3Keys, now: cases.now,
                                               toleranceSeconds: cases.tolerance) }
                    : Result { () throws(CoreError) in
                        try BanxaWebhook.verify(headers: c.headers, body: c.body, apiKey: SignedHeaderCases.banxaAPIKey,
                                                secrets: SignedHeaderCases.banxaSecrets, now: cases.now, toleranceSeconds: cases.tolerance) }
                if got != c.expected {
                    Issue.record("\(provider) \(c.recipe) \(c.headers): expected \(c.expected), got \(got)")
                    return
                }
                if case .failure(let error) = got { #expect(error.isUnauthenticated) }
                outcomes[provider + " " + ((try? got.get()) == nil ? "refused" : "verified"), default: 0] += 1
            }
        }
        // Both answers are common, so neither side of the property is tested by accident alone.
        for key in ["web3 verified", "web3 refused", "banxa verified", "banxa refused"] {
            #expect(outcomes[key, default: 0] > Self.iterations / 20, "\(outcomes)")
        }
    }

    @Test("randomly mutated signature headers are refused with an authentication error unless they are still correctly signed, 100,000 each")
    func mutatedSignatureHeaders() {
        var web3 = Mutator(rng: SplitMix64(seed: 35), seeds: ["1764417600", "1764417600123", Web3Webhook.signature(key: "k", timestamp: "1764417600", body: Array(Self.web3Body.utf8))].map { Array($0.utf8) })
        var banxa = Mutator(rng: SplitMix64(seed: 45), seeds: [Array(("Bearer key:" + BanxaWebhook.signature(secret: "s", nonce: "1764417600000", body: Array(Self.web3Body.utf8)) + ":1764417600000").utf8)])
        let now = Timestamp(seconds: 1_764_417_600)
        let body = Array(Self.web3Body.utf8)
        func trimmed(_ s: String) -> String { s.trimmingCharacters(in: [" ", "\t"]) }
        for _ in 0..<Self.iterations {
            let timestamp = String(decoding: web3.next(), as: UTF8.self), signature = String(decoding: web3.next(), as: UTF8.self)
            let w = Result { () throws(CoreError) in
                try Web3Webhook.verify(headers: ["x-pay-timestamp": timestamp, "x-pay-signature": signature], body: body, keys: ["k"], now: now)
            }
            let signedRight = trimmed(signature).lowercased() == Web3Webhook.signature(key: "k", timestamp: trimmed(timestamp), body: body)
            switch w {
            case .success(let v):
                #expect(signedRight && abs(v.signedAt.seconds - now.seconds) <= 300, "accepted \(timestamp.debugDescription) \(signature.debugDescription)")
            case .failure(let error):
                #expect(error.isUnauthenticated, "\(error)")
            }
            let authorization = String(decoding: banxa.next(), as: UTF8.self)
            let b = Result { () throws(CoreError) in
                try BanxaWebhook.verify(headers: ["authorization": authorization], body: body, apiKey: "key", secrets: ["s"], now: now)
            }
            switch b {
            case .success(let v):
                let parts = BanxaWebhook.credentials(authorization: trimmed(authorization))
                #expect(parts?.key == "key" && parts.map { $0.signature.lowercased() == BanxaWebhook.signature(secret: "s", nonce: $0.nonce, body: body) } == true
                        && abs(v.signedAt.seconds - now.seconds) <= 300, "accepted \(authorization.debugDescription)")
            case .failure(let error):
                #expect(error.isUnauthenticated, "\(error)")
            }
        }
    }

    @Test("the client-event parsers (order and enrollment) survive 100,000 mutated requests")
    func clientEvents() {
        var m = Mutator(rng: SplitMix64(seed: 5), seeds: [Self.clientBody, Self.bankpayBody,
            #"{"provider":"banxa","callback":"banxaDidCompleteCheckout","payload":{"paymentId":"p","rawQuery":"a=b"},"clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#,
            #"{"provider":"bankpay","callback":"onError","payload":{"error":"declined","message":"m","errors":{}},"clientEventId":"6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"}"#].map { Array($0.utf8) })
        let no = orderNo("SO-1")
        for _ in 0..<Self.iterations {
            let body = m.next()
            // Both parsers see every input: 100,000 each.
            if let s = try? ClientEventRequest.parse(merchantOrderNo: no, body: body, receivedAt: t0) {
                #expect(storedRoundTrip(.clientSignal(s)) == .clientSignal(s))
            }
            if let s = try? ClientEventRequest.parseEnrollment(enrollmentRef: "E-1", body: body, receivedAt: t0) {
                _ = EnrollmentState.reduce(EnrollmentState(enrollmentRef: "E-1"), RecordedEvent(event: .enrollment(s), position: 1, recordedAt: t0))
            }
        }
    }

    @Test("registration, observation and correction parsers survive 100,000 mutated requests each, and what they accept folds")
    func orderRequests() {
        var m = Mutator(rng: SplitMix64(seed: 6), seeds: [Self.registrationBody, Self.observationBody, Self.genericBody,
                                                         Self.banxaQueryBody, Self.correctionBody].map { Array($0.utf8) })
        let no = orderNo("SO-1")
        for n in 0..<Self.iterations {
            let body = m.next()
            var events: [LedgerEvent] = []
            if let r = try? OrderRequests.registration(body: body, receivedAt: t0) { events.append(.registered(r)) }
            if let e = try? OrderRequests.observation(merchantOrderNo: no, body: body, receivedAt: t0) { events.append(e) }
            if let c = try? OrderRequests.correction(merchantOrderNo: no, body: body, actor: "a", uniqueId: "u\(n)", receivedAt: t0) {
                events.append(.observed(c))
            }
            if !events.isEmpty {
                let s = fold(no, recorded(events))
                #expect(s.eventCount <= events.count)
                for e in events { #expect(storedRoundTrip(e) == e) }
            }
        }
    }

    @Test("stored events and order states decode to exactly what was encoded, for 20,000 generated histories")
    func storedRoundTrips() throws {
        var generator = StoredValueGenerator(rng: SplitMix64(seed: 71))
        for _ in 0..<20_000 {
            let (no, events) = generator.history()
            for e in events {
                #expect(storedRoundTrip(e) == e, "\(e.type) \(e.payload)")
                let decoded = Result { () throws(CoreError) in
                    try LedgerEvent(type: e.type, payload: e.payload, observedAt: e.observedAt, metadata: e.metadata)
                }
                #expect(decoded == .success(e))
            }
            let state = fold(no, recorded(events))
            let stored = try JSONValue.parse(state.storageJSON().serializedBytes)
            #expect(Result { () throws(CoreError) in try OrderState(storage: stored) } == .success(state), "\(stored)")
        }
    }

    @Test("a mutated stored payload decodes to a value whose own encoding decodes back to it unchanged, or fails with invalidEvent naming its type, 100,000 times")
    func storedDecoders() throws {
        let no = orderNo("SO-1")
        let events = recorded([registration(no), observation(no, .paid, at: at(1), amount: "40"), client(no, "banxaDidDismiss", at: at(2)),
                               refund(no, at: at(3)), observation(no, .expired, at: at(4))])
        let state = fold(no, events)
        var seeds = events.map { Array(("\($0.event.type)|" + $0.event.payload.description).utf8) }
        seeds.append(Array(("State|" + state.storageJSON().description).utf8))
        var m = Mutator(rng: SplitMix64(seed: 7), seeds: seeds)
        var decodedEvents = 0, decodedStates = 0, refused = 0
        for _ in 0..<Self.iterations {
            let input = m.next()
            guard let bar = input.firstIndex(of: UInt8(ascii: "|")) else { continue }
            let type = String(decoding: input[..<bar], as: UTF8.self)
            guard let payload = try? JSONParser.parse(Array(input[(bar + 1)...])) else { continue }
            if type == "State" {
                switch Result(catching: { () throws(CoreError) in try OrderState(storage: payload) }) {
                case .success(let s):
                    decodedStates += 1
                    let again = Result { () throws(CoreError) in try OrderState(storage: s.storageJSON()) }
                    #expect(again == .success(s), "\(payload)")
                    if case .success(let t) = again { #expect(t.storageJSON().serializedBytes == s.storageJSON().serializedBytes) }
                    _ = s.toJSON()
                case .failure(let error):
                    refused += 1
                    guard case .invalidEvent(type: "OrderState", let reason) = error, !reason.isEmpty else {
                        Issue.record("a stored state refused without saying why: \(error) for \(payload)")
                        continue
                    }
                }
            } else {
                switch Result(catching: { () throws(CoreError) in try LedgerEvent(type: type, payload: payload, observedAt: t0, metadata: payload) }) {
                case .success(let e):
                    decodedEvents += 1
                    #expect(e.type == type)
                    let again = Result { () throws(CoreError) in
                        try LedgerEvent(type: e.type, payload: e.payload, observedAt: e.observedAt, metadata: e.metadata)
                    }
                    #expect(again == .success(e), "\(type) \(payload)")
                    if case .success(let f) = again { #expect(f.payload.serializedBytes == e.payload.serializedBytes) }
                    if e.merchantOrderNo != nil {
                        _ = OrderState.reduce(state, RecordedEvent(event: e, position: 42, recordedAt: t0)).toJSON()
                    }
                case .failure(let error):
                    refused += 1
                    guard case .invalidEvent(type: type, let reason) = error, !reason.isEmpty else {
                        Issue.record("a stored \(type) refused without saying why: \(error) for \(payload)")
                        continue
                    }
                }
            }
        }
        #expect(decodedEvents > 1_000 && decodedStates > 100 && refused > 1_000,
                "both sides of the property are reached: \(decodedEvents) events and \(decodedStates) states decoded, \(refused) refused")
    }

    @Test("merchant order numbers and timestamps survive 100,000 random strings")
    func smallParsers() {
        var m = Mutator(rng: SplitMix64(seed: 8), seeds: ["SO-2026:1_a.b", "2024-01-31 12:48:36", "2026-11-29T12:00:00.123456+02:00", "1764417600123"].map { Array($0.utf8) })
        for _ in 0..<Self.iterations {
            let text = String(decoding: m.next(), as: UTF8.self)
            if let no = try? MerchantOrderNo(text) { #expect(no.value.utf8.count <= 64) }
            if let t = Timestamp.parse(text, lenient: true) { #expect(Timestamp.parse(t.rfc3339) == t) }
            _ = try? Web3Webhook.parseTimestamp(text)
            _ = try? BanxaWebhook.parseNonce(text)
            _ = BanxaWebhook.meaning(of: text)
        }
    }
}
