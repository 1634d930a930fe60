import Testing
import LedgerCore

@Suite("ExactDecimal")
struct ExactDecimalTests {
    @Test("amounts compare by value: 40.0 equals 40.00 and 40")
    func equalityByValue() throws {
        #expect(try ExactDecimal(parsing: "40.0") == ExactDecimal(parsing: "40.00"))
        #expect(try ExactDecimal(parsing: "40") == ExactDecimal(parsing: "40.000000000000000000"))
        #expect(try ExactDecimal(parsing: "0.1") != ExactDecimal(parsing: "0.10000000000000000001"))
        #expect(try ExactDecimal(parsing: "-0") == ExactDecimal(parsing: "0.00"))
        #expect(try Set([ExactDecimal(parsing: "1.50"), ExactDecimal(parsing: "1.5")]).count == 1)
    }

    @Test("18 fractional digits and 40+ integer digits stay exact")
    func wideValues() throws {
        let a = try ExactDecimal(parsing: "1234567890123456789012345678901234567890123.123456789012345678")
        let b = try ExactDecimal(parsing: "0.000000000000000001")
        #expect((a + b).description == "1234567890123456789012345678901234567890123.123456789012345679")
        #expect(try ExactDecimal(parsing: "0.000000000000000001") < ExactDecimal(parsing: "0.000000000000000002"))
    }

    @Test("addition carries, borrows and keeps the larger scale")
    func addition() throws {
        #expect(try (ExactDecimal(parsing: "40.00") + ExactDecimal(parsing: "1.5")).description == "41.50")
        #expect(try (ExactDecimal(parsing: "999.99") + ExactDecimal(parsing: "0.01")).description == "1000.00")
        #expect(try (ExactDecimal(parsing: "1") - ExactDecimal(parsing: "1.001")).description == "-0.001")
        #expect(try (ExactDecimal(parsing: "-5") + ExactDecimal(parsing: "5.0")).description == "0.0")
        #expect(try ExactDecimal(parsing: "40.00").canonical == "40")
        #expect(try ExactDecimal(parsing: "0.50").canonical == "0.5")
        #expect(try ExactDecimal(parsing: "00012.340").description == "12.340")
    }

    @Test("an exponent form is written out exactly; one whose written-out form is too long, or malformed, is refused")
    func writtenOut() throws {
        #expect(try ExactDecimal.writtenOut("1.2e-5") == "0.000012")
        #expect(try ExactDecimal.writtenOut("1e3") == "1000")
        #expect(try ExactDecimal.writtenOut("-4.25E+2") == "-425")
        #expect(try ExactDecimal.writtenOut("1.50e1") == "15.0")
        #expect(try ExactDecimal.writtenOut("40.00") == nil)
        #expect(try ExactDecimal.writtenOut("0e99") == "0" && ExactDecimal.writtenOut("-0e5") == "0")
        // Exactly 64 characters written out is accepted; 65 is not.
        #expect(try ExactDecimal.writtenOut("1.2345e-58")?.utf8.count == 64)
        #expect(throws: CoreError.self) { try ExactDecimal.writtenOut("1.2345e-59") }
        #expect(throws: CoreError.self) { try ExactDecimal.writtenOut("1e400") }
        #expect(throws: CoreError.self) { try ExactDecimal.writtenOut("1e-70") }
        #expect(throws: CoreError.self) { try ExactDecimal.writtenOut("1e") }
        #expect(throws: CoreError.self) { try ExactDecimal.writtenOut("e5") }
        #expect(throws: CoreError.self) { try ExactDecimal.writtenOut("1.e5") }
        #expect(throws: CoreError.self) { try ExactDecimal.writtenOut("1e99999") }
        // By value, the written-out form is the number the exponent form means.
        var rng = SplitMix64(seed: 11)
        for _ in 0..<5_000 {
            let mantissa = Int64.random(in: -999_999...999_999, using: &rng)
            let exponent = Int.random(in: -20...20, using: &rng)
            let text = try #require(try ExactDecimal.writtenOut("\(mantissa)e\(exponent)"))
            #expect(!text.contains("e"), "\(text)")
            if exponent >= 0 {
                let scaled = try ExactDecimal(parsing: String(mantissa) + String(repeating: "0", count: exponent))
                #expect(try ExactDecimal(parsing: text) == scaled, "\(mantissa)e\(exponent) → \(text)")
            } else {
                // mantissa × 10^exponent, shifted back by -exponent, is the mantissa again.
                let back = try #require(try ExactDecimal.writtenOut("\(text)e\(-exponent)"))
                #expect(try ExactDecimal(parsing: back) == ExactDecimal(mantissa), "\(mantissa)e\(exponent) → \(text) → \(back)")
            }
        }
    }

    @Test("addition agrees with integer arithmetic on random values")
    func additionProperty() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<10_000 {
            let a = Int64.random(in: -1_000_000_000...1_000_000_000, using: &rng)
            let b = Int64.random(in: -1_000_000_000...1_000_000_000, using: &rng)
            // Interpret both as amounts with 6 decimals.
            func text(_ v: Int64) -> String {
                let m = v.magnitude
                let s = String(m / 1_000_000) + "." + String(String(m % 1_000_000 + 1_000_000).dropFirst())
                return (v < 0 ? "-" : "") + s
            }
            let sum = try ExactDecimal(parsing: text(a)) + ExactDecimal(parsing: text(b))
            #expect(sum == (try ExactDecimal(parsing: text(a + b))))
            #expect((try ExactDecimal(parsing: text(a)) < ExactDecimal(parsing: text(b))) == (a < b))
        }
    }

    @Test("garbage, exponents and empty strings are typed errors")
    func rejects() {
        for bad in ["", "-", ".", ".5", "5.", "-.5", "1.2.3", "1e5", "1E-2", "abc", " 1", "1 ", "0x10", "1,5", "NaN", "∞", "4\u{0}0"] {
            #expect(coreError { try ExactDecimal(parsing: bad) } == .invalidAmount(bad), "\(bad)")
        }
    }

    @Test("an amount string over 64 characters is 'amount too long'")
    func tooLong() {
        let long = String(repeating: "9", count: 65)
        #expect(coreError { try ExactDecimal(parsing: long) } == .amountTooLong(length: 65, limit: 64))
        #expect(coreError { try ExactDecimal(parsing: String(repeating: "9", count: 64)) } == nil)
    }
}
