import Testing
import LedgerCore

/// The input rules of http-api.md for the ledger's own write routes (issue 18, item 6):
/// an order number is never `.` or `..`; every field the spec gives as text is a JSON
/// string, never a number, and an empty string is refused rather than read as absent;
/// client events keep every field the app sent. Providers' formats are not ours: their
/// bodies and responses may still carry numbers.
@Suite("input rules of the ledger's own API")
struct InputRuleTests {
    static let cases = 3_000

    // MARK: generators

    /// Order-number candidates: mostly the alphabet, dots weighted so `.` and `..` come up often,
    /// sometimes a foreign character, lengths 0 to 66.
    static func orderNumberCandidate(_ rng: inout SplitMix64) -> String {
        let alphabet = Array("ABCXYZabcxyz0189._:-")
        let foreign: [Character] = [" ", "/", "%", "Ä", "?", "#", "é", "+"]
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return "."
        case 1: return ".."
        case 2: return String(repeating: ".", count: Int.random(in: 0...4, using: &rng))
        default:
            let count = [0, 1, 2, 3, 8, 63, 64, 65, 66].randomElement(using: &rng)!
            var s = ""
            for _ in 0..<count {
                s.append(Int.random(in: 0..<40, using: &rng) == 0 ? foreign.randomElement(using: &rng)! : alphabet.randomElement(using: &rng)!)
            }
            return s
        }
    }

    static func expectedValid(_ s: String) -> Bool {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-".utf8)
        return (1...64).contains(s.utf8.count) && s.utf8.allSatisfy(allowed.contains) && s != "." && s != ".."
    }

    /// A JSON number literal (integers, fractions, exponents, negatives).
    static func numberLiteral(_ rng: inout SplitMix64) -> String {
        let int = String(UInt64.random(in: 0...1_000_000, using: &rng))
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return int
        case 1: return int + "." + String(UInt32.random(in: 0...999, using: &rng))
        case 2: return "-" + int
        case 3: return int + "e" + String(Int.random(in: 0...5, using: &rng))
        default: return int + ".0"
        }
    }

    /// A value that is not a usable string for a text field: a number, a boolean, an array,
    /// an object, or the empty string.
    static func nonText(_ rng: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0, 1: return .number(numberLiteral(&rng))
        case 2: return .bool(Bool.random(using: &rng))
        case 3: return .array([.string("x")])
        case 4: return .object([("value", .string("x"))])
        default: return .string("")
        }
    }

    /// Any JSON value, a few levels deep, with strings that hold e-mail addresses now and then.
    static func anyValue(_ rng: inout SplitMix64, depth: Int = 0) -> JSONValue {
        let strings = ["jane.doe@example.com", "Payment failed for bob+1@shop.example", "plain", "ünïcödé ✓", "", "a\"b\\c\n",
                       "status=failed&email=ann%40example.org"]
        switch Int.random(in: 0..<(depth >= 2 ? 4 : 6), using: &rng) {
        case 0: return .string(strings.randomElement(using: &rng)!)
        case 1: return .number(numberLiteral(&rng))
        case 2: return .bool(Bool.random(using: &rng))
        case 3: return .null
        case 4: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in anyValue(&rng, depth: depth + 1) })
        default:
            return .object((0..<Int.random(in: 0...3, using: &rng)).map { i in ("k\(i)", anyValue(&rng, depth: depth + 1)) })
        }
    }

    /// Members an app may add beside the SDK's fields, none of them a canonical name.
    static func extraMembers(_ rng: inout SplitMix64) -> [(String, JSONValue)] {
        let names = ["localizedDescription", "email", "screen", "attempt", "debug", "customer", "x-trace"]
        var out: [(String, JSONValue)] = []
        for name in names.shuffled(using: &rng).prefix(Int.random(in: 1...4, using: &rng)) {
            out.append((name, name == "email" ? .string("jane.doe@example.com") : anyValue(&rng)))
        }
        return out
    }

    // MARK: bodies of each write route

    static let uuid = "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d"

    static let registration: [(String, JSONValue)] = [
        ("merchantOrderNo", .string("SO-1")), ("provider", .string("web3")), ("amount", .string("40.00")), ("asset", .string("USDT")),
        ("chainId", .string("56")), ("tokenId", .string("1")), ("fiatCurrency", .string("EUR")), ("fiatAmount", .string("37")),
        ("externalCustomerId", .string("cust-7")), ("providerOrderId", .string("P1")),
    ]
    static let observation: [(String, JSONValue)] = [
        ("provider", .string("acme")), ("response", .object([("status", .integer(3))])), ("observedAt", .string("2025-11-29T12:00:00Z")),
    ]
    static let clientEvent: [(String, JSONValue)] = [
        ("provider", .string("banxa")), ("callback", .string("banxaDidDismiss")), ("payload", .object([])),
        ("clientEventId", .string(uuid)), ("occurredAt", .string("2025-11-29T12:00:00Z")), ("sdkVersion", .string("1.2.0")),
    ]
    static let enrollmentEvent: [(String, JSONValue)] = [
        ("provider", .string("bankpay")), ("callback", .string("close")), ("payload", .object([("type", .string("close"))])),
        ("clientEventId", .string(uuid)), ("occurredAt", .string("2025-11-29T12:00:00Z")), ("sdkVersion", .string("1.2.0")),
    ]
    static let correction: [(String, JSONValue)] = [
        ("status", .integer(5)), ("reason", .string("cancelled by phone")), ("correctionId", .string(uuid)), ("provider", .string("web3")),
    ]

    enum Route: CaseIterable { case registration, observation, clientEvent, enrollmentEvent, correction }

    /// The route's fields that http-api.md gives as text (`correctionId` and a correction's
    /// `provider` are the ledger's own additions, read by the same rule).
    static func textFields(_ route: Route) -> [String] {
        switch route {
        case .registration: return registration.map(\.0)
        case .observation: return ["provider", "observedAt"]
        case .clientEvent, .enrollmentEvent: return ["provider", "callback", "clientEventId", "occurredAt", "sdkVersion"]
        case .correction: return ["reason", "correctionId", "provider"]
        }
    }

    static func base(_ route: Route) -> [(String, JSONValue)] {
        switch route {
        case .registration: return registration
        case .observation: return observation
        case .clientEvent: return clientEvent
        case .enrollmentEvent: return enrollmentEvent
        case .correction: return correction
        }
    }

    static func send(_ route: Route, _ fields: [(String, JSONValue)]) -> CoreError? {
        let body = JSONSerializer.bytes(.object(fields))
        return coreError {
            switch route {
            case .registration: _ = try OrderRequests.registration(body: body, receivedAt: t0)
            case .observation: _ = try OrderRequests.observation(merchantOrderNo: orderNo("SO-1"), body: body, receivedAt: t0)
            case .clientEvent: _ = try ClientEventRequest.parse(merchantOrderNo: orderNo("SO-1"), body: body, receivedAt: t0)
            case .enrollmentEvent: _ = try ClientEventRequest.parseEnrollment(enrollmentRef: "ENR-1", body: body, receivedAt: t0)
            case .correction:
                _ = try OrderRequests.correction(merchantOrderNo: orderNo("SO-1"), body: body, actor: "ann", uniqueId: nil, receivedAt: t0)
            }
        }
    }

    static func replacing(_ fields: [(String, JSONValue)], _ key: String, with value: JSONValue) -> [(String, JSONValue)] {
        fields.map { $0.0 == key ? ($0.0, value) : $0 }
    }

    // MARK: order numbers

    @Test("each character alone is a stored order number exactly when it is in the alphabet (every scalar up to U+07FF)")
    func orderNumberAlphabet() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-".unicodeScalars)
        for value in 0..<0x800 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(Character(scalar))
            #expect(MerchantOrderNo.isStoredForm(text) == alphabet.contains(scalar), "U+\(String(value, radix: 16))")
            #expect(MerchantOrderNo.isStoredForm("A" + text + "z") == alphabet.contains(scalar), "U+\(String(value, radix: 16))")
        }
        #expect(MerchantOrderNo.isStoredForm(String(repeating: "a", count: 64)))
        #expect(!MerchantOrderNo.isStoredForm(String(repeating: "a", count: 65)))
        #expect(!MerchantOrderNo.isStoredForm(""))
    }

    @Test("an order number is accepted exactly when it is 1-64 characters of the alphabet and neither . nor .. (3,000 seeded candidates, path and body)")
    func orderNumbers() throws {
        var rng = SplitMix64(seed: 1806)
        var refusedDots = 0
        for _ in 0..<Self.cases {
            let s = Self.orderNumberCandidate(&rng)
            let valid = Self.expectedValid(s)
            #expect(MerchantOrderNo.isValid(s) == valid, "\(s.debugDescription)")
            #expect(((try? MerchantOrderNo(s)) != nil) == valid, "\(s.debugDescription)")
            let error = Self.send(.registration, Self.replacing(Self.registration, "merchantOrderNo", with: .string(s)))
            #expect((error == nil) == valid, "\(s.debugDescription): \(String(describing: error))")
            if let error {
                #expect(!error.isUnauthenticated && error.message.contains("merchantOrderNo"), "\(error.message)")
            }
            if MerchantOrderNo.isDotSegment(s) {
                refusedDots += 1
                #expect(error == .invalidMerchantOrderNo(s) && error?.message.contains("dot segment") == true)
                // Stored before the rule: still reads back.
                #expect(try MerchantOrderNo(stored: s).value == s)
                #expect(MerchantOrderNo(stream: "order-" + s)?.value == s)
            }
            // The same rule for enrollment references, which travel in paths the same way.
            let enrollment = coreError { try ClientEventRequest.parseEnrollment(enrollmentRef: s, body: JSONSerializer.bytes(.object(Self.enrollmentEvent)), receivedAt: t0) }
            #expect((enrollment == nil) == valid, "\(s.debugDescription)")
        }
        #expect(refusedDots > 300, "the generator must reach . and .. often")
    }

    @Test("an order registered as . or .. before the rule replays from its stored payload, and its stream names it")
    func storedDotOrdersReadBack() throws {
        for s in [".", ".."] {
            let stored = try JSONValue.parse(#"{"merchantOrderNo":"\#(s)","provider":"web3","amount":"40","asset":"USDT"}"#)
            let event = try LedgerEvent(type: EventType.orderRegistered, payload: stored, observedAt: t0)
            #expect(event.merchantOrderNo?.value == s && event.stream == "order-" + s)
            let state = OrderState.replay(try MerchantOrderNo(stored: s), recorded([event]))
            #expect(state.expectedAmount == "40")
            let signal = try JSONValue.parse(#"{"enrollmentRef":"\#(s)","provider":"bankpay","callback":"close","payload":{},"clientEventId":"\#(Self.uuid)"}"#)
            #expect(throws: Never.self) { try LedgerEvent(type: EventType.enrollmentSignal, payload: signal, observedAt: t0) }
        }
    }

    @Test("a provider's verified webhook naming . or .. is mapped, not refused: it names an order made with the provider")
    func providerDotOrdersMapped() throws {
        for no in [".", ".."] {
            let web3 = bytes(#"{"merchantOrderNo":"\#(no)","status":3,"amount":"40"}"#)
            let headers = ["x-pay-timestamp": "1764417600", "x-pay-signature": Web3Webhook.signature(key: "k", timestamp: "1764417600", body: web3)]
            let (_, event) = try Web3Webhook.ingest(headers: headers, body: web3, keys: ["k"], now: t0)
            #expect(event.merchantOrderNo?.value == no && storedRoundTrip(event) == event)
            let banxa = bytes(#"{"order_id":"b1","status":"complete","external_id":"\#(no)"}"#)
            let auth = "Bearer key:" + BanxaWebhook.signature(secret: "s", nonce: "1764417600000", body: banxa) + ":1764417600000"
            let (_, banxaEvent) = try BanxaWebhook.ingest(headers: ["authorization": auth], body: banxa, apiKey: "key", secrets: ["s"], now: t0)
            #expect(banxaEvent.merchantOrderNo?.value == no)
        }
    }

    @Test("an order number given as a JSON number is refused naming merchantOrderNo: 1000 and 1000.0 never become two orders")
    func orderNumberAsNumber() {
        var rng = SplitMix64(seed: 18062)
        for literal in ["1000", "1000.0", "1.5", "1e3"] + (0..<500).map({ _ in Self.numberLiteral(&rng) }) {
            let error = Self.send(.registration, Self.replacing(Self.registration, "merchantOrderNo", with: .number(literal)))
            guard case .invalidField(let name, let reason)? = error else {
                Issue.record("\(literal): \(String(describing: error))")
                continue
            }
            #expect(name == "merchantOrderNo" && reason.contains("JSON string"), "\(reason)")
        }
        #expect(Self.send(.registration, Self.replacing(Self.registration, "merchantOrderNo", with: .string("1000"))) == nil)
    }

    // MARK: text fields

    @Test("every text field of every write route refuses a number, a boolean, an array, an object or an empty string, naming the field (3,000 seeded cases)")
    func textFieldsAreStrings() {
        var rng = SplitMix64(seed: 18063)
        for route in Route.allCases { #expect(Self.send(route, Self.base(route)) == nil, "the base body of \(route) is valid") }
        var refusedNumbers = 0, refusedEmpty = 0
        for _ in 0..<Self.cases {
            let route = Route.allCases.randomElement(using: &rng)!
            let field = Self.textFields(route).randomElement(using: &rng)!
            let bad = Self.nonText(&rng)
            let error = Self.send(route, Self.replacing(Self.base(route), field, with: bad))
            guard let error else {
                Issue.record("\(route).\(field) = \(bad) was accepted")
                continue
            }
            #expect(!error.isUnauthenticated, "\(error)")
            #expect(error.message.contains(field), "\(route).\(field) = \(bad): \(error.message)")
            if case .number = bad { refusedNumbers += 1 }
            if bad == .string("") { refusedEmpty += 1 }
        }
        #expect(refusedNumbers > 500 && refusedEmpty > 200)
    }

    @Test("an empty string in an optional field is refused, not read as absent; leaving the field out or sending null is absence")
    func emptyIsNotAbsent() {
        let optional: [(Route, String)] = [
            (.registration, "chainId"), (.registration, "tokenId"), (.registration, "fiatCurrency"), (.registration, "fiatAmount"),
            (.registration, "externalCustomerId"), (.registration, "providerOrderId"), (.observation, "observedAt"),
            (.clientEvent, "occurredAt"), (.clientEvent, "sdkVersion"), (.enrollmentEvent, "occurredAt"),
            (.enrollmentEvent, "sdkVersion"), (.correction, "correctionId"), (.correction, "provider"),
        ]
        for (route, field) in optional {
            let error = Self.send(route, Self.replacing(Self.base(route), field, with: .string("")))
            guard case .invalidField(let name, let reason)? = error else {
                Issue.record("\(route).\(field) = \"\": \(String(describing: error))")
                continue
            }
            #expect(name == field && reason.contains("empty"), "\(reason)")
            #expect(Self.send(route, Self.base(route).filter { $0.0 != field }) == nil, "\(route) without \(field)")
            #expect(Self.send(route, Self.replacing(Self.base(route), field, with: .null)) == nil, "\(route) with \(field) null")
        }
        // observedAt "" used to mean "now": refused, with the field named.
        let observed = Self.send(.observation, Self.replacing(Self.observation, "observedAt", with: .string("")))
        #expect(observed?.message.contains("observedAt") == true)
    }

    @Test("amounts are decimal strings: a JSON number amount or fiatAmount is refused naming the field, with the string to send")
    func amountsAreStrings() {
        var rng = SplitMix64(seed: 18064)
        for _ in 0..<500 {
            let field = Bool.random(using: &rng) ? "amount" : "fiatAmount"
            let literal = Self.numberLiteral(&rng)
            let error = Self.send(.registration, Self.replacing(Self.registration, field, with: .number(literal)))
            guard case .invalidField(let name, let reason)? = error else {
                Issue.record("\(field) = \(literal): \(String(describing: error))")
                continue
            }
            #expect(name == field && reason.contains("decimal string"), "\(reason)")
        }
        // A bad decimal string names which of the two amounts it is.
        let fiat = Self.send(.registration, Self.replacing(Self.registration, "fiatAmount", with: .string("3,7")))
        #expect(fiat == .invalidField(name: "fiatAmount", reason: #""3,7" is not a plain decimal number such as 40 or 0.015"#))
    }

    @Test("providers' formats are theirs: numbers in a web3 webhook, a Banxa webhook and query responses are still read")
    func providerNumbersStillRead() throws {
        let web3 = bytes(#"{"merchantOrderNo":1000,"orderNo":99,"status":3,"amount":40,"chainId":56,"tokenId":1,"txHash":""}"#)
        let headers = ["x-pay-timestamp": "1764417600", "x-pay-signature": Web3Webhook.signature(key: "k", timestamp: "1764417600", body: web3)]
        let (_, event) = try Web3Webhook.ingest(headers: headers, body: web3, keys: ["k"], now: t0)
        guard case .observed(let o) = event else { Issue.record("\(event)"); return }
        #expect(o.merchantOrderNo.value == "1000" && o.providerOrderId == "99" && o.amount == "40" && o.txHash == nil)

        let banxa = bytes(#"{"order_id":123,"status":"complete","external_id":"SO-1","fiat_amount":40,"transaction_hash":""}"#)
        let auth = "Bearer key:" + BanxaWebhook.signature(secret: "s", nonce: "1764417600000", body: banxa) + ":1764417600000"
        let (_, banxaEvent) = try BanxaWebhook.ingest(headers: ["authorization": auth], body: banxa, apiKey: "key", secrets: ["s"], now: t0)
        guard case .observed(let b) = banxaEvent else { Issue.record("\(banxaEvent)"); return }
        #expect(b.providerOrderId == "123")

        // A query response the backend reports is the provider's; the request around it is ours.
        let query = bytes(#"{"provider":"web3","response":{"code":0,"status":4,"merchantOrderNo":1000,"orderNo":7,"amount":40}}"#)
        let q = try OrderRequests.observation(merchantOrderNo: orderNo("1000"), body: query, receivedAt: t0)
        guard case .observed(let qo) = q else { Issue.record("\(q)"); return }
        #expect(qo.status == .completed && qo.providerOrderId == "7")
        // web3's createOrder response may name its orderNo as a number too.
        let registered = try OrderRequests.registration(body: bytes(#"{"merchantOrderNo":"SO-1","provider":"web3","amount":"40","asset":"USDT","providerResponse":{"code":0,"orderNo":12345}}"#), receivedAt: t0)
        #expect(registered.providerOrderId == "12345")
    }

    // MARK: client events keep what the app sent

    /// A payload of each callback kind, canonical members first.
    static func canonicalPayloads() -> [(provider: String, callback: String, payload: [(String, JSONValue)], enrollment: Bool)] {
        let fails: [[(String, JSONValue)]] = [
            [("error", .string("invalidURL"))], [("error", .string("serverError")), ("code", .integer(502))],
            [("error", .string("unauthorized"))], [("error", .string("decodingFailed")), ("message", .string("keyNotFound"))],
            [("error", .string("networkUnavailable"))],
            [("error", .string("missingCredentials")), ("fields", .array([.string("apiKey"), .string("partnerID")]))],
            [("error", .string("sdkNotConfigured"))], [("error", .string("checkoutFailed")), ("rawQuery", .string("status=failed"))],
            [("error", .string("checkoutFailed"))], [("error", .string("unknown")), ("message", .string("boom"))],
        ]
        var out = fails.map { (provider: "banxa", callback: "banxaDidFail", payload: $0, enrollment: false) }
        out.append(("banxa", "banxaDidCompleteCheckout", [("paymentId", .string("pay_1")), ("orderId", .string("8f3b")), ("status", .string("succeeded"))], false))
        out.append(("banxa", "banxaDidCompleteCheckout", [("rawQuery", .string("status=success&email=jane%40example.com"))], false))
        out.append(("banxa", "banxaDidDismiss", [], false))
        out.append(("bankpay", "acceptedTransactionIntentServiceFee", [("type", .string("acceptedTransactionIntentServiceFee")), ("data", .object([("transactionIntentId", .string("ti_1"))]))], false))
        out.append(("bankpay", "close", [("type", .string("close"))], false))
        out.append(("bankpay", "error", [("error", .string("declined")), ("message", .string("Insufficient funds")), ("errors", .object([("account", .string("closed"))]))], false))
        out.append(("bankpay", "bankAccountAdded", [("type", .string("bankAccountAdded")), ("data", .object([("intent_id", .string("ei_1"))]))], true))
        out.append(("bankpay", "close", [("type", .string("close"))], true))
        out.append(("bankpay", "onError", [("type", .string("enrollmentError")), ("data", .object([("error", .string("declined")), ("message", .string("no"))]))], true))
        out.append(("acme", "close", [("anything", .string("goes"))], false))
        return out
    }

    static func relay(_ provider: String, _ callback: String, _ payload: JSONValue, enrollment: Bool) throws(CoreError) -> (callback: String, payload: JSONValue, event: LedgerEvent) {
        let body = JSONSerializer.bytes(.object([("provider", .string(provider)), ("callback", .string(callback)), ("payload", payload),
                                                 ("clientEventId", .string(uuid)), ("occurredAt", .string("2025-11-29T12:00:00Z"))]))
        if enrollment {
            let s = try ClientEventRequest.parseEnrollment(enrollmentRef: "ENR-1", body: body, receivedAt: t0)
            return (s.callback, s.payload, .enrollment(s))
        }
        let s = try ClientEventRequest.parse(merchantOrderNo: orderNo("SO-1"), body: body, receivedAt: t0)
        return (s.callback, s.payload, .clientSignal(s))
    }

    @Test("every client callback keeps every member the app sent, in its parsed payload and through storage (3,000 seeded payloads)")
    func clientEventsKeepEveryField() throws {
        var rng = SplitMix64(seed: 18065)
        let kinds = Self.canonicalPayloads()
        for _ in 0..<Self.cases {
            let kind = kinds.randomElement(using: &rng)!
            var members = kind.payload
            for extra in Self.extraMembers(&rng) {
                members.insert(extra, at: Int.random(in: 0...members.count, using: &rng))
            }
            let sent = JSONValue.object(members)
            let parsed = try Self.relay(kind.provider, kind.callback, sent, enrollment: kind.enrollment)
            #expect(parsed.payload == sent, "\(kind.callback): \(parsed.payload) != \(sent)")
            #expect(storedRoundTrip(parsed.event) == parsed.event, "the stored payload reads back")
            // Support's view: every address masked, the rest kept.
            let masked = JSONSerializer.string(EmailMasking.mask(parsed.payload))
            #expect(!masked.contains("jane.doe@example.com") && !masked.contains("bob+1@shop.example") && !masked.contains("ann%40example.org"))
            if members.contains(where: { $0.0 == "email" }) { #expect(masked.contains("j***@example.com")) }
        }
    }

    @Test("extra members do not excuse a canonical field: a wrong APIError, checkout result or BankPay dictionary is still refused")
    func canonicalFieldsStillChecked() {
        let extra: (String, JSONValue) = ("localizedDescription", .string("The operation couldn’t be completed."))
        let bad: [(String, String, [(String, JSONValue)], Bool)] = [
            ("banxa", "banxaDidFail", [("error", .string("serverError")), extra], false),                      // no code
            ("banxa", "banxaDidFail", [("error", .string("serverError")), ("code", .string("502")), extra], false),
            ("banxa", "banxaDidFail", [("error", .string("gremlins")), extra], false),
            ("banxa", "banxaDidFail", [extra], false),
            ("banxa", "banxaDidFail", [("error", .string("decodingFailed")), extra], false),                   // no message
            ("banxa", "banxaDidFail", [("error", .string("missingCredentials")), ("fields", .array([.integer(1)])), extra], false),
            ("banxa", "banxaDidCompleteCheckout", [("paymentId", .integer(5)), extra], false),
            ("bankpay", "acceptedTransactionIntentServiceFee", [("type", .string("acceptedTransactionIntentServiceFee")), extra], false),
            ("bankpay", "error", [("message", .string("no code")), extra], false),
            ("bankpay", "bankAccountAdded", [("type", .string("bankAccountAdded")), ("data", .object([extra])), extra], true),
        ]
        for (provider, callback, members, enrollment) in bad {
            let error = coreError { try Self.relay(provider, callback, .object(members), enrollment: enrollment) }
            #expect(error?.reason == "callback_payload_mismatch", "\(callback) \(members): \(String(describing: error))")
        }
        // A dismiss carries no SDK data; an app's additions must at least be an object.
        #expect(coreError { try Self.relay("banxa", "banxaDidDismiss", .array([]), enrollment: false) }?.reason == "callback_payload_mismatch")
    }

    @Test("a banxaDidFail with localizedDescription and an email keeps both beside its APIError case, which still reads back")
    func banxaDidFailKeepsItsExtras() throws {
        let sent = try JSONValue.parse(#"{"error":"serverError","code":502,"localizedDescription":"Server error 502","email":"jane.doe@example.com"}"#)
        let parsed = try Self.relay("banxa", "banxaDidFail", sent, enrollment: false)
        #expect(parsed.payload == sent)
        #expect(try BanxaAPIError(json: parsed.payload) == .serverError(502))
        #expect(JSONSerializer.string(EmailMasking.mask(parsed.payload)).contains(#""email":"j***@example.com""#))
    }
}
