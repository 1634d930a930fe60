import LedgerCore
import Testing

/// `JSONBText.observationPayload` writes an observation's payload without the
/// `JSONValue` tree: it must equal the tree's jsonb text byte for byte (the hash
/// chain is computed over it), whatever fields are set and whatever the body holds.
@Suite("Observation payload text")
struct ObservationPayloadTextTests {
    static func text(_ rng: inout SplitMix64) -> String? {
        let pool = ["", "40.00", "USDT", "0xabc", "quote\"d", "back\\slash", "tab\tnew\nline", "ctl\u{01}", "ünï©ødé 🚀", "a", "P000123"]
        return Bool.random(using: &rng) ? pool.randomElement(using: &rng)! : nil
    }

    static func json(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 2 ? 5 : 7), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .number(["0", "-0", "12", "1.50", "-3.25e2", "1E+3", "0.000", "7e-2"].randomElement(using: &rng)!)
        case 3, 4: return .string(text(&rng) ?? "x")
        case 5: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in json(&rng, depth: depth + 1) })
        default:
            let keys = ["id", "status", "a", "b", "amount", "txHash", "orderNo", "ä", "zz", "AA"]
            return .object((0..<Int.random(in: 0...6, using: &rng)).map { _ in   // repeated keys included
                (keys.randomElement(using: &rng)!, json(&rng, depth: depth + 1))
            })
        }
    }

    @Test("equals the jsonb text of the payload tree on 5,000 generated observations")
    func matchesTheTree() throws {
        var rng = SplitMix64(seed: 0x0B5E_12FE)
        for n in 0..<5_000 {
            let e = StatusObservation(
                merchantOrderNo: try MerchantOrderNo("O-\(n)"), provider: ["web3", "banxa", "bankpay", "other"].randomElement(using: &rng)!,
                source: [.webhook, .query, .operator].randomElement(using: &rng)!,
                status: OrderStatus(rawValue: Int.random(in: 1...6, using: &rng))!, providerStatus: Self.text(&rng),
                observedAt: Timestamp(seconds: 1_764_417_600), amount: Self.text(&rng), asset: Self.text(&rng),
                fiatAmount: Self.text(&rng), fiatCurrency: Self.text(&rng), txHash: Self.text(&rng),
                providerOrderId: Self.text(&rng), actor: Self.text(&rng), reason: Self.text(&rng),
                keyId: Self.text(&rng), body: Bool.random(using: &rng) ? Self.json(&rng, depth: 0) : nil,
                idempotencyKey: "web3:\(n)")
            let direct = JSONBText.observationPayload(e)
            let tree = JSONBText.bytes(LedgerEvent.observed(e).payload)
            if direct != tree {
                Issue.record("observation \(n): \(direct.map { String(decoding: $0, as: UTF8.self) } ?? "nil") != \(tree.map { String(decoding: $0, as: UTF8.self) } ?? "nil")")
                return
            }
        }
    }

    @Test("a body number numeric would refuse makes the payload nil, as through the tree")
    func refusedNumber() throws {
        let e = StatusObservation(merchantOrderNo: try MerchantOrderNo("O-1"), provider: "web3", source: .webhook,
                                  status: .confirming, observedAt: Timestamp(seconds: 0),
                                  body: .object([("n", .number("1e200000"))]), idempotencyKey: "k")
        #expect(JSONBText.observationPayload(e) == nil)
        #expect(JSONBText.bytes(LedgerEvent.observed(e).payload) == nil)
    }
}
