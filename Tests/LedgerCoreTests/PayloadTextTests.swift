import Testing
import LedgerCore

/// An event read from its payload column's text in place (`LedgerEvent(type:payloadText:)`,
/// the plain text through `PlainJSONObject`) is held to the event read from the parsed
/// payload: the same event, or the same error, for every text.
@Suite("Events from the payload's text: the parsed payload's event or error")
struct PayloadTextTests {
    /// An outcome compared as a whole: the event, or the error's words.
    enum Outcome: Equatable {
        case event(LedgerEvent)
        case error(String)
    }

    static func fromText(_ type: String, _ text: [UInt8], metadata: JSONValue?) -> Outcome {
        text.withUnsafeBufferPointer { b in
            do { return .event(try LedgerEvent(type: type, payloadText: b, observedAt: t0, metadata: metadata)) }
            catch { return .error(String(describing: error)) }
        }
    }

    static func fromParsed(_ type: String, _ text: [UInt8], metadata: JSONValue?) -> Outcome {
        text.withUnsafeBufferPointer { b in
            do { return .event(try LedgerEvent(type: type, payload: JSONValue.parse(stored: b), observedAt: t0, metadata: metadata)) }
            catch { return .error(String(describing: error)) }
        }
    }

    /// Checks one text under one type; true when the plain object path read it.
    @discardableResult
    static func check(_ type: String, _ text: [UInt8], metadata: JSONValue? = nil) -> Bool {
        let plain = text.withUnsafeBufferPointer { PlainJSONReader.object($0)?.value }
        let whole = text.withUnsafeBufferPointer { PlainJSONReader.parse($0) }
        if case .object? = whole { #expect(plain == whole, "\(String(decoding: text, as: UTF8.self))") } else { #expect(plain == nil) }
        #expect(fromText(type, text, metadata: metadata) == fromParsed(type, text, metadata: metadata),
                "\(type) \(String(decoding: text, as: UTF8.self))")
        return plain != nil
    }

    @Test("10,000 seeded histories' payloads, as jsonb prints them and compactly: the same events; the plain ones all take the plain path")
    func seededEvents() {
        var generator = StoredValueGenerator(rng: SplitMix64(seed: 4242))
        var plain = 0, asciiJSONB = 0
        for _ in 0..<10_000 {
            for event in generator.history().1 {
                if let jsonb = JSONBText.bytes(event.payload) {
                    let read = Self.check(event.type, jsonb, metadata: event.metadata)
                    if read { plain += 1 }
                    if jsonb.allSatisfy({ $0 >= 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\\") })
                        && PlainJSONReaderTests.depth(event.payload) <= PlainJSONReader.maxDepth {
                        asciiJSONB += 1
                        #expect(read, "\(String(decoding: jsonb, as: UTF8.self))")
                    }
                }
                Self.check(event.type, event.payload.serializedBytes, metadata: event.metadata)
            }
        }
        #expect(plain > 1_000 && asciiJSONB > 1_000, "\(plain) read plainly, \(asciiJSONB) plain ASCII in jsonb's form")
    }

    @Test("100,000 mutations of stored payloads, each read as every type: the same event or the same error")
    func mutated() {
        let seeds = [
            #"{"asset": "USDT", "amount": "40.00", "source": "webhook", "status": 3, "txHash": "0x3399", "provider": "web3", "statusName": "paid", "idempotencyKey": "web3:ab", "providerStatus": "3", "merchantOrderNo": "S-1", "providerOrderId": "P1"}"#,
            #"{"asset": "USDT", "amount": "40.00", "chainId": "1", "tokenId": "1", "provider": "web3", "merchantOrderNo": "S-b7-0", "providerOrderId": "Pb7"}"#,
            #"{"payload": {"a": [1, null]}, "callback": "close", "provider": "web3", "clientEventId": "3399", "merchantOrderNo": "S-1"}"#,
            #"{"kind": "refund", "amount": null, "source": "operator", "provider": "banxa", "idempotencyKey": "k", "merchantOrderNo": "S-1"}"#,
            #"{"payload": {}, "callback": "onSuccess", "provider": "bankpay", "clientEventId": "e1", "enrollmentRef": "E-1", "occurredAt": "2026-01-01T00:00:00Z"}"#,
        ].map { Array($0.utf8) }
        var mutator = FuzzTests.Mutator(rng: SplitMix64(seed: 212_121), seeds: seeds)
        var plain = 0, events = 0
        for _ in 0..<100_000 / EventType.all.count {
            let text = mutator.next()
            for type in EventType.all {
                if Self.check(type, text) { plain += 1 }
                if case .event = Self.fromText(type, text, metadata: nil) { events += 1 }
            }
        }
        #expect(plain > 2_500, "the plain path was taken \(plain) times")
        #expect(events > 1_000, "\(events) texts made events")
    }

    @Test("what the plain object path leaves to the parsed payload: not an object, escapes, keys out of jsonb's order, trailing bytes")
    func refusals() {
        for text in [#"[1]"#, #""x""#, #"{"a": "x\"y"}"#, #"{"b": 1, "a": 2}"#, #"{"a": 1} x"#, #"{"a": 1,}"#, "", "{"] {
            #expect(Array(text.utf8).withUnsafeBufferPointer { PlainJSONReader.object($0) } == nil, "\(text)")
            Self.check(EventType.statusObserved, Array(text.utf8))
        }
    }
}
