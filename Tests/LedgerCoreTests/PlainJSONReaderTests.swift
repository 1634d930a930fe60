import Testing
import LedgerCore

/// `PlainJSONReader` reads jsonb's plain text without the full parser's checks, so it is
/// held to the full parser: whatever it reads, it reads as `JSONParser` does, and it
/// reads the ledger's own stored payloads and metadata (the common case it is for).
@Suite("PlainJSONReader: the full parser's values, or nil")
struct PlainJSONReaderTests {
    /// What the full parser makes of `bytes` as stored JSON; nil when it refuses them.
    static func full(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONParser.parse(bytes, maxDepth: JSONParser.storedMaxDepth)
    }

    static func plain(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { PlainJSONReader.parse($0) }
    }

    /// Checks one input; true when the plain reader read it.
    @discardableResult
    static func check(_ bytes: [UInt8]) -> Bool {
        guard let plain = plain(bytes) else { return false }
        let full = full(bytes)
        #expect(full == plain, "\(String(decoding: bytes, as: UTF8.self))")
        return true
    }

    @Test("20,000 seeded events' payloads and metadata, as jsonb prints them and compactly: the same values; the ASCII ones all read")
    func seededEvents() {
        var generator = StoredValueGenerator(rng: SplitMix64(seed: 21))
        var read = 0, asciiJSONB = 0
        for _ in 0..<10_000 {
            let (_, events) = generator.history()
            for event in events {
                for value in [event.payload, event.metadata] {
                    if let jsonb = JSONBText.bytes(value) {
                        if Self.check(jsonb) { read += 1 }
                        if jsonb.allSatisfy({ $0 >= 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\\") }) {
                            asciiJSONB += 1
                            // Plain ASCII in jsonb's form within the depth: exactly what it is for.
                            if Self.depth(value) <= PlainJSONReader.maxDepth { #expect(Self.plain(jsonb) != nil) }
                        }
                    }
                    Self.check(value.serializedBytes)
                }
            }
        }
        #expect(read > 5_000)
        #expect(asciiJSONB > 5_000)
    }

    @Test("100,000 mutations of jsonb texts: whatever the plain reader reads, the full parser reads the same")
    func mutated() {
        let seeds = [
            #"{"asset": "USDT", "amount": "40.00", "source": "webhook", "status": 3, "txHash": "0x3399", "provider": "web3", "statusName": "paid", "merchantOrderNo": "S-1"}"#,
            #"{"keyId": "k1:3f2a9c0e", "requestId": "r", "signedWith": {"X-Pay-Signature": "e655", "X-Pay-Timestamp": "1796410655"}, "verifiedBy": "signature"}"#,
            #"{"payload": {}, "callback": "close", "provider": "web3", "clientEventId": "3399", "merchantOrderNo": "S-1"}"#,
            #"{"a": [1, -2, 0, true, false, null, [], {}], "bb": {"c": {"d": {"e": [[["x"]]]}}}}"#,
            #"[1, "2", {"k": 10}]"#,
        ].map { Array($0.utf8) }
        var mutator = FuzzTests.Mutator(rng: SplitMix64(seed: 2121), seeds: seeds)
        var read = 0
        for _ in 0..<100_000 where Self.check(mutator.next()) { read += 1 }
        #expect(read > 1_000)
    }

    @Test("what it leaves to the full parser: escapes, non-ASCII, fractions, keys out of jsonb's order, repeated keys, deep nesting, trailing bytes")
    func refusals() {
        let deep = String(repeating: "[", count: PlainJSONReader.maxDepth + 1) + String(repeating: "]", count: PlainJSONReader.maxDepth + 1)
        let withinDepth = String(repeating: "[", count: PlainJSONReader.maxDepth) + String(repeating: "]", count: PlainJSONReader.maxDepth)
        for text in [#"{"a": "x\"y"}"#, #"{"a": "é"}"#, #"{"a": 1.5}"#, #"{"a": 1e3}"#, #"{"bb": 1, "a": 2}"#, #"{"b": 1, "a": 2}"#,
                     #"{"a": 1, "a": 2}"#, deep, #"{"a": 1} x"#, #"{"a": 01}"#, "", "{", #"{"a" 1}"#] {
            #expect(Self.plain(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(Self.plain(Array(withinDepth.utf8)) == Self.full(Array(withinDepth.utf8)))
        #expect(Self.plain(Array(#" {"a": -0, "b": [true, null], "cc": {}} "#.utf8))
                == .object([("a", .number("-0")), ("b", .array([.bool(true), .null])), ("cc", .object([]))]))
    }

    /// How deeply a value nests containers (a scalar: 0).
    static func depth(_ value: JSONValue) -> Int {
        switch value {
        case .array(let items): return 1 + (items.map(depth).max() ?? 0)
        case .object(let fields): return 1 + (fields.map { depth($0.1) }.max() ?? 0)
        default: return 0
        }
    }
}
