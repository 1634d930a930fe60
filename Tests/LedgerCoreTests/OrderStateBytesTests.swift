import Testing
@testable import LedgerCore

/// `documentBytes()` and `storageBytes()` must be byte for byte the serialized
/// tree forms, for every kind of state: generated from random events with every
/// optional field sometimes set, and strings that need escaping.
struct OrderStateBytesTests {
    static let cases = 3_000
    static let texts: [String?] = [nil, "40", "0.015", "USDT", "P-00042", "0xabc", "quote\"back\\slash",
                                   "tab\tline\nbreak", "ctl\u{01}\u{1f}del\u{7f}", "ü😀", "a@b.example", ""]

    static func text(_ rng: inout SplitMix64) -> String? { texts.randomElement(using: &rng)! }
    static func time(_ rng: inout SplitMix64) -> Timestamp {
        Timestamp(microseconds: 1_767_225_600_000_000 + Int64.random(in: 0...10_000_000_000, using: &rng))
    }

    static func events(_ rng: inout SplitMix64, _ no: MerchantOrderNo) -> [RecordedEvent] {
        var events: [LedgerEvent] = []
        if Bool.random(using: &rng) {
            events.append(.registered(OrderRegistration(
                merchantOrderNo: no, provider: ["web3", "banxa"].randomElement(using: &rng)!,
                amount: ["40.00", "0.015", "1"].randomElement(using: &rng)!, asset: ["USDT", "EUR"].randomElement(using: &rng)!,
                chainId: text(&rng), tokenId: text(&rng), fiatCurrency: text(&rng), fiatAmount: text(&rng),
                externalCustomerId: text(&rng), providerOrderId: text(&rng), registeredAt: time(&rng))))
        }
        for k in 0..<Int.random(in: 0...12, using: &rng) {
            events.append(.observed(StatusObservation(
                merchantOrderNo: no, provider: ["web3", "banxa", "bankpay"].randomElement(using: &rng)!,
                source: [.webhook, .query, .operator].randomElement(using: &rng)!,
                status: OrderStatus(rawValue: Int.random(in: 1...6, using: &rng))!, providerStatus: text(&rng),
                observedAt: time(&rng), amount: text(&rng), asset: text(&rng), fiatAmount: text(&rng),
                fiatCurrency: text(&rng), txHash: text(&rng), providerOrderId: text(&rng), idempotencyKey: "o\(k)")))
        }
        for k in 0..<Int.random(in: 0...2, using: &rng) {
            events.append(.adjustment(Adjustment(
                merchantOrderNo: no, provider: "banxa", source: .webhook, amount: text(&rng), asset: text(&rng),
                observedAt: time(&rng), idempotencyKey: "r\(k)")))
        }
        for k in 0..<Int.random(in: 0...2, using: &rng) {
            let payload: JSONValue = Bool.random(using: &rng)
                ? .object([("orderId", .string(text(&rng) ?? "x")), ("n", .integer(k)), ("ok", .bool(true)), ("none", .null)])
                : .array([.string("quote\"d"), .number("1.5e3")])
            events.append(.clientSignal(ClientSignal(
                merchantOrderNo: no, provider: "banxa", callback: ["banxaDidCompleteCheckout", "banxaDidFail"].randomElement(using: &rng)!,
                payload: payload, clientEventId: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0\(k)",
                occurredAt: Bool.random(using: &rng) ? time(&rng) : nil, receivedAt: time(&rng))))
        }
        var position = Int64.random(in: 1...1_000, using: &rng)
        return events.map { event in
            position += Int64.random(in: 1...5, using: &rng)
            return RecordedEvent(event: event, position: position, recordedAt: time(&rng))
        }
    }

    @Test("documentBytes and storageBytes equal the serialized toJSON and storageJSON of generated states")
    func directFormsEqualTheTrees() throws {
        var rng = SplitMix64(seed: 0x5EED_0B17)
        var withConflicts = 0, withSignals = 0, empty = 0
        for n in 0..<Self.cases {
            let no = orderNo("BYTES-\(n)")
            let state = OrderState.replay(no, Self.events(&rng, no))
            if !state.conflicts.isEmpty { withConflicts += 1 }
            if state.lastClientSignal != nil { withSignals += 1 }
            if state.eventCount == 0 { empty += 1 }
            let document = text(state.documentBytes()), stored = text(state.storageBytes())
            let expectedDocument = text(JSONSerializer.bytes(state.toJSON()))
            let expectedStored = text(JSONSerializer.bytes(state.storageJSON()))
            #expect(document == expectedDocument)
            #expect(stored == expectedStored)
            if document != expectedDocument || stored != expectedStored { break }
            // The stored form reloads into the same state.
            #expect(try OrderState(storage: JSONValue.parse(stored)) == state)
        }
        // The generator reaches the shapes that matter.
        #expect(withConflicts > Self.cases / 10)
        #expect(withSignals > Self.cases / 4)
        #expect(empty > 0)
    }

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("the writer separates members and elements, and nests")
    func writerShapes() {
        var w = JSONFieldWriter(capacity: 0)
        w.openObject()
        w.key("a"); w.openArray(); w.closeArray()
        w.key("b"); w.openArray()
        w.element(); w.integer(1)
        w.element(); w.openObject(); w.closeObject()
        w.element(); w.openObject(); w.key("c"); w.null(); w.string("d", ifPresent: nil); w.string("e", orNull: nil); w.closeObject()
        w.closeArray()
        w.string("f", ifPresent: "x\"y")
        w.closeObject()
        #expect(String(decoding: w.bytes, as: UTF8.self) == #"{"a":[],"b":[1,{},{"c":null,"e":null}],"f":"x\"y"}"#)
    }
}

/// A client signal's payload reaches the state as received on the live path and
/// from the store (jsonb's form) on a replay: both must give the same state.
struct ClientPayloadFormTests {
    @Test("a client payload in any key order or number spelling folds as its stored form does")
    func livePayloadEqualsStored() throws {
        let no = orderNo("FORM-1")
        let payloads: [JSONValue] = [
            .object([("error", .string("serverError")), ("code", .number("1.0e2"))]),
            .object([("zz", .number("1.50")), ("a", .object([("b", .array([.number("-0"), .number("7")])), ("aa", .null)]))]),
            .object([("k", .number("1")), ("k", .number("2")), ("é", .bool(true)), ("e", .string("x"))]),
            .array([.number("1E+2"), .object([("y", .number("0.000")), ("x", .number("12e-1"))])]),
        ]
        for payload in payloads {
            let live = LedgerEvent.clientSignal(ClientSignal(
                merchantOrderNo: no, provider: "banxa", callback: "banxaDidFail", payload: payload,
                clientEventId: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d", occurredAt: at(5), receivedAt: at(6)))
            // What the store gives back: the payload as jsonb prints it, parsed again.
            let storedText = try #require(JSONBText.string(payload))
            let stored = LedgerEvent.clientSignal(ClientSignal(
                merchantOrderNo: no, provider: "banxa", callback: "banxaDidFail", payload: try JSONValue.parse(storedText),
                clientEventId: "6f1c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0d", occurredAt: at(5), receivedAt: at(6)))
            let fromLive = fold(no, [RecordedEvent(event: live, position: 3, recordedAt: at(7))])
            let fromStored = fold(no, [RecordedEvent(event: stored, position: 3, recordedAt: at(7))])
            #expect(fromLive == fromStored, "\(storedText)")
            #expect(fromLive.storageBytes() == fromStored.storageBytes())
            #expect(fromLive.documentBytes() == fromStored.documentBytes())
            // And the normal form is what jsonb prints.
            #expect(JSONSerializer.string(JSONBText.normalized(payload)).replacingOccurrences(of: " ", with: "")
                    == storedText.replacingOccurrences(of: " ", with: ""))
        }
    }
}
