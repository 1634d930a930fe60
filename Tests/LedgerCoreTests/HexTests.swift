import LedgerCore
import Testing

@Suite("Hexadecimal text")
struct HexTests {
    @Test("bytes encode and decode back, in either case; odd lengths and non-digits are refused (2,000 seeded cases)")
    func roundTrip() {
        var rng = SplitMix64(seed: 2112)
        for _ in 0..<2_000 {
            let bytes = (0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let text = Hex.encode(bytes)
            #expect(Hex.decode(text) == bytes)
            #expect(Hex.decode(text.uppercased()) == bytes)
            guard !text.isEmpty else { continue }
            #expect(Hex.decode(String(text.dropLast())) == nil, "\(text) without its last digit")
            var broken = Array(text.utf8)
            broken[Int(rng.next() % UInt64(broken.count))] = Array("g/:@G` \u{7f}".utf8)[Int(rng.next() % 8)]
            #expect(Hex.decode(String(decoding: broken, as: UTF8.self)) == nil, "\(text) with a non-digit")
        }
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("é") == nil)
        #expect(Hex.decode("0é0") == nil)
    }
}
