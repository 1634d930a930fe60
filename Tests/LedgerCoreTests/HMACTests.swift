import CCrypto
import LedgerCore
import Testing

/// `Crypto.hmacSHA256` builds HMAC (RFC 2104) on a once-fetched SHA-256: it must
/// give exactly what OpenSSL's own HMAC gives, for every key length (shorter than,
/// equal to and longer than SHA-256's 64-byte block) and every message.
@Suite("HMAC-SHA256")
struct HMACTests {
    static func openSSL(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, &out, &length)
            }
        }
        return out
    }

    @Test("RFC 4231 test cases 1, 2, 6 and 7 (short key, text key, 131-byte keys)")
    func rfc4231() {
        let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            ([UInt8](repeating: 0xaa, count: 131),
             Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for c in cases { #expect(Hex.encode(Crypto.hmacSHA256(key: c.key, message: c.data)) == c.mac) }
    }

    @Test("equals OpenSSL's HMAC() on 5,000 seeded keys (0-200 bytes) and messages (0-2,000 bytes)")
    func matchesOpenSSL() {
        var random = SplitMix64(seed: 0x4d41_43)
        for _ in 0..<5_000 {
            let key = (0..<Int.random(in: 0...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let message = (0..<Int.random(in: 0...2_000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let mine = Crypto.hmacSHA256(key: key, message: message)
            let theirs = Self.openSSL(key: key, message: message)
            if mine != theirs {
                Issue.record("key \(Hex.encode(key)), \(message.count)-byte message: \(Hex.encode(mine)) != \(Hex.encode(theirs))")
                return
            }
        }
    }

    @Test("a key made ready once gives Crypto's HMAC, for 2,000 seeded keys of 0-200 bytes and split messages")
    func preparedKey() {
        var random = SplitMix64(seed: 0x4D_AC_0001)
        for n in 0..<2_000 {
            let key = (0..<Int(random.next() % 201)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let message = (0..<Int(random.next() % 700)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let split = message.isEmpty ? 0 : Int(random.next() % UInt64(message.count + 1))
            let prepared = HMACKey(key)
            let expected = Crypto.hmacSHA256(key: key, message: message)
            #expect(prepared.mac(Array(message[..<split]), Array(message[split...])) == expected, "case \(n)")
            // Used again, it gives the same: the kept states are copied, never advanced.
            #expect(prepared.mac([], message) == expected, "case \(n), second use")
            #expect(expected == Self.openSSL(key: key, message: message), "case \(n) against OpenSSL's HMAC")
        }
    }
}
