import Testing
import LedgerCore

/// An export's totals (exports.md) are exact: `ExactSum` must give the very text that
/// adding every amount as an `ExactDecimal` gives, scale included, however long the
/// amounts are and wherever its 128-bit coefficient would overflow.
@Suite("Exact sums of amounts")
struct ExactSumTests {
    static func randomAmount(_ rng: inout SplitMix64) -> String? {
        func digits(_ n: Int) -> String {
            String((0..<n).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
        }
        switch Int.random(in: 0..<20, using: &rng) {
        case 0: return nil
        case 1: return ["", ".5", "5.", "1e3", "abc", "--1", "1.2.3", " 1"].randomElement(using: &rng)!
        case 2: return "9" + digits(Int.random(in: 30...62, using: &rng))   // near or past the 128-bit range
        case 3: return "-" + digits(Int.random(in: 1...40, using: &rng)) + "." + digits(Int.random(in: 1...20, using: &rng))
        case 4: return "+" + digits(Int.random(in: 1...5, using: &rng))
        case 5: return "0." + digits(Int.random(in: 30...60, using: &rng))   // a scale too large to widen by
        default:
            let whole = digits(Int.random(in: 1...12, using: &rng))
            let scale = Int.random(in: 0...8, using: &rng)
            return scale == 0 ? whole : whole + "." + digits(scale)
        }
    }

    @Test("the sum and its scale equal adding each amount as an ExactDecimal; amounts that are no decimal add only a row")
    func matchesExactDecimal() {
        var rng = SplitMix64(seed: 0x5E_70_7A)
        for _ in 0..<2_000 {
            var sum = ExactSum(), expected = ExactDecimal.zero
            let count = Int.random(in: 0...40, using: &rng)
            for _ in 0..<count {
                let amount = Self.randomAmount(&rng)
                sum.add(amount)
                if let exact = amount.flatMap(ExactDecimal.init) { expected += exact }
            }
            #expect(sum.rows == Int64(count))
            #expect(sum.amount.description == expected.description)
        }
    }

    @Test("a sum past 128 bits stays exact")
    func overflowStaysExact() {
        var sum = ExactSum()
        let big = String(repeating: "9", count: 36)
        for _ in 0..<1_000 { sum.add(big) }
        sum.add("0.000001")
        #expect(sum.amount.description == "999" + String(repeating: "9", count: 33) + "000.000001")
    }
}
