import Foundation
import Testing
@testable import LedgerCore

@Suite("RFC 3339 times")
struct TimestampTests {
    /// Splitmix64: a seeded generator, so a failure names a reproducible case.
    struct Seeded {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D1_049B_B133_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("printing then parsing gives the same time, for 20,000 seeded times from year 1 to 9999")
    func roundTrip() {
        var random = Seeded(state: 20261129)
        let first: Int64 = -62_135_596_800_000_000        // 0001-01-01T00:00:00Z
        let last: Int64 = 253_402_300_799_999_999         // 9999-12-31T23:59:59.999999Z
        for n in 0..<20_000 {
            var micros = first + Int64(random.next() % UInt64(last - first))
            if n % 3 == 0 { micros -= micros % 1_000_000 }           // whole seconds
            if n % 5 == 0 { micros -= micros % 1_000 }               // milliseconds
            let t = Timestamp(microseconds: micros)
            let text = t.rfc3339
            #expect(Timestamp.parse(text) == t, "\(micros) printed as \(text)")
            #expect(text.utf8.count >= 20 && text.utf8.count <= 27 && text.hasSuffix("Z"), "\(text)")
            #expect(!text.contains(".") || !text.dropLast().hasSuffix("0"), "trailing zeros: \(text)")
        }
    }

    @Test("known times print as expected")
    func known() {
        #expect(Timestamp(microseconds: 0).rfc3339 == "1970-01-01T00:00:00Z")
        #expect(Timestamp(microseconds: 1_000).rfc3339 == "1970-01-01T00:00:00.001Z")
        #expect(Timestamp(microseconds: 123_456).rfc3339 == "1970-01-01T00:00:00.123456Z")
        #expect(Timestamp(microseconds: 120_000).rfc3339 == "1970-01-01T00:00:00.12Z")
        #expect(Timestamp(microseconds: -1).rfc3339 == "1969-12-31T23:59:59.999999Z")
        #expect(Timestamp(seconds: 1_796_083_200).rfc3339 == "2026-12-01T00:00:00Z")
        #expect(Timestamp(microseconds: -62_135_596_800_000_000).rfc3339 == "0001-01-01T00:00:00Z")
        #expect(Timestamp(microseconds: 253_402_300_799_999_999).rfc3339 == "9999-12-31T23:59:59.999999Z")
        // Years outside 0...9999 print as String prints the year, padded to four digits.
        #expect(Timestamp(microseconds: 253_402_300_800_000_000).rfc3339 == "10000-01-01T00:00:00Z")
        #expect(Timestamp(microseconds: -62_135_596_800_000_001).rfc3339 == "0000-12-31T23:59:59.999999Z")
    }
}

@Suite("An export period's bound: a date or an RFC 3339 time with its offset")
struct TimeBoundTests {
    @Test("dates mean 00:00 UTC; times keep their offset and microseconds")
    func accepted() {
        #expect(TimeBound.parse("2026-11-01") == Timestamp.parse("2026-11-01T00:00:00Z"))
        #expect(TimeBound.parse("2026-11-01T01:00:00+01:00") == Timestamp.parse("2026-11-01T00:00:00Z"))
        #expect(TimeBound.parse("2026-11-01T00:00:00.123456Z")?.microseconds == Timestamp.parse("2026-11-01T00:00:00Z")!.microseconds + 123_456)
        #expect(TimeBound.parse("2026-11-01t00:00:00.5z") != nil)
        #expect(TimeBound.parse("2026-10-31T19:30:00-04:30") == Timestamp.parse("2026-11-01T00:00:00Z"))
        #expect(TimeBound.parse("2026-11-01T23:59:00+23:59") == Timestamp.parse("2026-11-01T00:00:00Z"))
    }

    @Test("a time without its offset, with a space for the T, finer than microseconds, a leap second, an offset out of range, or not a time at all is refused")
    func refused() {
        for text in ["2026-11-01T00:00:00", "2026-11-01 00:00:00Z", "2026-11-01 00:00:00", "2026-11-01T00:00:00.1234567Z",
                     "2026-11-01T00:00:00.000000000+01:00", "2026-11-1", "2026-02-30", "soon", "", "2026-11-01T00:00Z",
                     "2026-12-31T23:59:60Z", "2026-12-31T23:59:60.5Z", "2026-11-01T00:00:00+24:00", "2026-11-01T00:00:00+99:99",
                     "2026-11-01T00:00:00-01:60", "2026-11-01T00:00:00 01:00"] {
            #expect(TimeBound.parse(text) == nil, "\(text)")
        }
    }

    @Test("an offset that carries a time out of the years 0000-9999 is refused: what parses prints back and parses to the same time")
    func fourDigitYearsOnly() throws {
        for text in ["0000-01-01T00:00:00+00:01", "0000-01-01T00:00:00.5+23:59", "9999-12-31T23:59:59-00:01", "9999-12-31T23:00:00.000001-01:00"] {
            #expect(Timestamp.parse(text) == nil, "\(text)")
            #expect(Timestamp.parse(text, lenient: true) == nil, "\(text)")
        }
        for text in ["0000-01-01T00:00:00Z", "0000-01-01T00:01:00+00:01", "9999-12-31T23:59:59.999999Z", "9999-12-31T22:59:59+01:00"] {
            let time = try #require(Timestamp.parse(text), "\(text)")
            #expect(Timestamp.parse(time.rfc3339) == time, "\(text) → \(time.rfc3339)")
        }
        #expect(Timestamp.earliest.rfc3339 == "0000-01-01T00:00:00Z" && Timestamp.latest.rfc3339 == "9999-12-31T23:59:59.999999Z")
        // Every offset on the edges: whatever is accepted reads back.
        var rng = SplitMix64(seed: 0xED6E)
        for _ in 0..<5_000 {
            let edge = Bool.random(using: &rng) ? "0000-01-01T00:" : "9999-12-31T23:"
            let sign = Bool.random(using: &rng) ? "+" : "-"
            let text = edge + String(format: "%02d:%02d", Int.random(in: 0..<60, using: &rng), Int.random(in: 0..<60, using: &rng))
                + sign + String(format: "%02d:%02d", Int.random(in: 0..<24, using: &rng), Int.random(in: 0..<60, using: &rng))
            if let time = Timestamp.parse(text) { #expect(Timestamp.parse(time.rfc3339) == time, "\(text)") }
        }
    }
}
