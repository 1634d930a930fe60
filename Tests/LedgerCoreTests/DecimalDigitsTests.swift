import Testing
@testable import LedgerCore

@Suite("Decimal digits written into a buffer")
struct DecimalDigitsTests {
    @Test("an integer's digits are String's, for 20,000 seeded integers of every width and the extremes")
    func sameAsString() {
        var random = SplitMix64(seed: 20261202)
        var cases: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        for _ in 0..<20_000 {
            let width = Int(random.next() % 64)
            let value = Int64(bitPattern: random.next()) >> width
            cases.append(value)
        }
        for value in cases {
            var out: [UInt8] = [0x7b]   // what is in the buffer already stays
            DecimalDigits.append(value, to: &out)
            #expect(out == [0x7b] + Array(String(value).utf8), "\(value)")
        }
    }

    @Test("zero-padded fields fill exactly their width")
    func padded() {
        let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 14) { buffer -> String in
            buffer.initialize(repeating: UInt8(ascii: "x"))
            DecimalDigits.write(7, width: 3, into: buffer, at: 1)
            DecimalDigits.write(123456, width: 6, into: buffer, at: 4)
            DecimalDigits.write(0, width: 2, into: buffer, at: 11)
            return String(decoding: UnsafeBufferPointer(buffer), as: UTF8.self)
        }
        #expect(text == "x007123456x00x")
    }
}
