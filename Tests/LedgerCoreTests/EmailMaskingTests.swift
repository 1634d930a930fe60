import Testing
import LedgerCore

@Suite("e-mail masking")
struct EmailMaskingTests {
    @Test("e-mail addresses inside any string are masked, other text is untouched")
    func masks() {
        #expect(EmailMasking.mask("jane.doe@example.com") == "j***@example.com")
        #expect(EmailMasking.mask("contact: a+b@x.io, or c@d.org.") == "contact: a***@x.io, or c***@d.org.")
        #expect(EmailMasking.mask("no mail @ here, user@localhost") == "no mail @ here, u***@localhost")
        let v: JSONValue = .object([("externalCustomerId", .string("jane@example.com")), ("n", .number("1")), ("a", .array([.string("x@y.z")]))])
        #expect(EmailMasking.mask(v) == .object([("externalCustomerId", .string("j***@example.com")), ("n", .number("1")), ("a", .array([.string("x***@y.z")]))]))
    }

    @Test("a megabyte of separators is masked in linear time")
    func separatorFlood() {
        let flood = String(repeating: "%40", count: 350_000)
        let started = ContinuousClock.now
        #expect(EmailMasking.mask(flood) == flood)
        #expect(EmailMasking.mask(String(repeating: "a%40", count: 100_000) + "b.com").hasSuffix("b.com"))
        // Quadratic, the first took minutes; linear, well under a second even in a debug build.
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("URL-encoded addresses, unusual local parts and object keys are masked too")
    func masksHiddenForms() {
        #expect(EmailMasking.mask("orderId=1&email=john.doe%40example.com") == "orderId=1&email=j***%40example.com")
        #expect(EmailMasking.mask("o'brien!x@example.com") == "o***@example.com")
        #expect(EmailMasking.mask("100%40 off") == "100%40 off")
        // Shapes a narrower scanner let through (non-ASCII, '=' and '&', quoted, dotless, IDN).
        #expect(EmailMasking.mask("josé@example.com") == "j***@example.com")
        #expect(EmailMasking.mask("élise@example.com") == "é***@example.com")
        #expect(EmailMasking.mask("jané.doe@example.com") == "j***@example.com")
        #expect(EmailMasking.mask("jane=doe@example.com") == "j***@example.com")
        #expect(EmailMasking.mask("a&b@example.com") == "a***@example.com")
        #expect(EmailMasking.mask("jane.doe@localhost") == "j***@localhost")
        #expect(EmailMasking.mask(#""jane doe"@example.com"#) == #""***@example.com"#)
        #expect(EmailMasking.mask("jane@bücher.de") == "j***@bücher.de")
        // Domains that begin beyond ASCII, and address literals.
        #expect(EmailMasking.mask("иван@почта.рф") == "и***@почта.рф")
        #expect(EmailMasking.mask("用户@例子.广告") == "用***@例子.广告")
        #expect(EmailMasking.mask("jane@[192.0.2.1]") == "j***@[192.0.2.1]")
        #expect(EmailMasking.mask("to: jane@[IPv6:2001:db8::1], bob@x.io") == "to: j***@[IPv6:2001:db8::1], b***@x.io")
        #expect(EmailMasking.mask("user%40почта.рф") == "u***%40почта.рф")
        #expect(EmailMasking.mask("email=user%40%D0%BF.rf&x=1") == "email=u***%40%D0%BF.rf&x=1")
        // Non-ASCII separators between addresses: each address masked (the separator, read as
        // part of the local part, is the character kept).
        #expect(EmailMasking.mask("jane@x.com\u{00A0}bob@y.com") == "j***@x.com\u{00A0}***@y.com")
        #expect(EmailMasking.mask("a@x.com、b@y.com") == "a***@x.com、***@y.com")
        #expect(EmailMasking.mask("jane@x.com—bob@y.com") == "j***@x.com—***@y.com")
        let keyed: JSONValue = .object([("john@example.com", .string("x"))])
        #expect(EmailMasking.mask(keyed) == .object([("j***@example.com", .string("x"))]))
    }

    @Test("the quick check finds an @ or a %40 exactly when the text has one (10,000 seeded strings)")
    func quickCheck() {
        var rng = SplitMix64(seed: 40)
        let pieces = ["%", "4", "0", "@", "%4", "%40", "a", "é", "%%", "40", " "]
        for _ in 0..<10_000 {
            let text = (0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            let bytes = Array(text.utf8)
            let has = bytes.contains(UInt8(ascii: "@"))
                || (bytes.count >= 3 && (0...(bytes.count - 3)).contains { bytes[$0] == 37 && bytes[$0 + 1] == 52 && bytes[$0 + 2] == 48 })
            #expect(EmailMasking.mayHoldAddress(text) == has, "\(text)")
        }
    }
}
