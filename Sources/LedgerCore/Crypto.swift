import CCrypto

/// SHA-256, HMAC-SHA256, constant-time comparison and random bytes, from OpenSSL libcrypto.
/// No OpenSSL type appears in this API.
public enum Crypto {
    public static func sha256<Bytes: Collection>(_ data: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: 32)
        let done: Void? = data.withContiguousStorageIfAvailable { buf in
            digest(UnsafeRawBufferPointer(buf), into: &out)
        }
        if done == nil {
            let copy = Array(data)
            copy.withUnsafeBytes { digest($0, into: &out) }
        }
        return out
    }

    /// SHA-256 through an implementation fetched once: OpenSSL 3's one-shot
    /// `SHA256()` looks the algorithm up in its provider store at every call,
    /// under a lock that threads hashing at once (every request's token) contend on.
    private static func digest(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var length: UInt32 = 32
        let ok = out.withUnsafeMutableBufferPointer { o in
            EVP_Digest(bytes.baseAddress, bytes.count, o.baseAddress, &length, FetchedDigest.sha256.pointer, nil)
        }
        precondition(ok == 1 && length == 32, "OpenSSL EVP_Digest(SHA-256) failed")
    }

    /// HMAC-SHA256 over the concatenation of `parts` (so callers need not copy a
    /// timestamp and a body into one buffer).
    public static func hmacSHA256(key: [UInt8], parts: [[UInt8]]) -> [UInt8] {
        hmac(key: key) { update in for part in parts { update(part) } }
    }

    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        hmac(key: key) { update in update(message) }
    }

    /// HMAC-SHA256 (RFC 2104) streamed through the SHA-256 fetched once (`digest`):
    /// OpenSSL 3's one-shot `HMAC()` fetches the HMAC and SHA-256 implementations
    /// again at every call, which cost every webhook more than the hashing itself.
    /// The message is hashed where it lies (no copy); the key block, the pads and
    /// the inner digest are wiped before they are freed, and OpenSSL wipes its
    /// digest state. Checked against `HMAC()` and RFC 4231's vectors
    /// (Tests/LedgerCoreTests/HMACTests.swift).
    private static func hmac(key: [UInt8], message feed: (_ update: ([UInt8]) -> Void) -> Void) -> [UInt8] {
        var block = hmacKeyBlock(key)
        var inner = [UInt8](repeating: 0, count: 32)
        var mac = [UInt8](repeating: 0, count: 32)
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed: out of memory") }
        defer {
            EVP_MD_CTX_free(context)
            wipe(&block)
            wipe(&inner)
        }
        startPad(context, block, mask: 0x36)
        feed { digestUpdate(context, $0) }
        digestFinal(context, into: &inner)
        startPad(context, block, mask: 0x5c)
        digestUpdate(context, inner)
        digestFinal(context, into: &mac)
        return mac
    }

    // HMAC's parts, shared with `HMACKey`.

    /// The key as HMAC's 64-byte block: hashed first when longer, zero-padded. Wipe it after.
    static func hmacKeyBlock(_ key: [UInt8]) -> [UInt8] {
        let blockSize = 64
        var block = [UInt8](repeating: 0, count: blockSize)
        if key.count > blockSize {
            var hashed = sha256(key)
            block.replaceSubrange(0..<hashed.count, with: hashed)
            wipe(&hashed)
        } else {
            block.replaceSubrange(0..<key.count, with: key)
        }
        return block
    }

    /// Starts `context`'s SHA-256 with the pad `block ^ mask` (0x36 inner, 0x5c outer); the
    /// pad is wiped once hashed.
    static func startPad(_ context: OpaquePointer, _ block: [UInt8], mask: UInt8) {
        precondition(EVP_DigestInit_ex(context, FetchedDigest.sha256.pointer, nil) == 1,
                     "OpenSSL EVP_DigestInit_ex(SHA-256) failed")
        var pad = block.map { $0 ^ mask }
        digestUpdate(context, pad)
        wipe(&pad)
    }

    static func digestUpdate(_ context: OpaquePointer, _ bytes: [UInt8]) {
        let ok = bytes.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        precondition(ok == 1, "OpenSSL EVP_DigestUpdate(SHA-256) failed")
    }

    static func digestFinal(_ context: OpaquePointer, into out: inout [UInt8]) {
        var length: UInt32 = 32
        let ok = out.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        precondition(ok == 1 && length == 32, "OpenSSL EVP_DigestFinal_ex(SHA-256) failed")
    }

    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }

    /// Compares in time that depends only on the lengths, never on where the bytes differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 }
        }
    }

    /// Cryptographically strong random bytes (tokens, nonces).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(ok == 1, "OpenSSL RAND_bytes failed: the system has no entropy source")
        return out
    }
}

/// Lowercase hexadecimal encoding and decoding.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let bytes = Array(bytes)   // shares storage when it already is an array
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            var i = 0
            for b in bytes {
                buffer[i] = digits[Int(b >> 4)]
                buffer[i + 1] = digits[Int(b & 0x0f)]
                i += 2
            }
            return i
        }
    }

    /// Nil when the text is not an even number of hex digits.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0 else { return nil }
        return utf8.withContiguousStorageIfAvailable(decode) ?? Array(utf8).withUnsafeBufferPointer(decode)
    }

    private static func decode(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: utf8.count / 2) { out, count in
            nibbles.withUnsafeBufferPointer { table in
                for i in 0..<utf8.count / 2 {
                    let hi = table[Int(utf8[2 * i])], lo = table[Int(utf8[2 * i + 1])]
                    guard hi | lo < 16 else {
                        valid = false
                        break
                    }
                    out[i] = hi << 4 | lo
                    count = i + 1
                }
            }
        }
        return valid ? out : nil
    }

    /// Each byte's value as a hex digit (either case), 0xFF for any other byte: one load a
    /// digit, for the signatures checked on every webhook and again by `ledger verify`.
    private static let nibbles: [UInt8] = (0...255).map { c in
        switch UInt8(c) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt8(c) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt8(c) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt8(c) - UInt8(ascii: "A") + 10
        default: return 0xFF
        }
    }
}

/// An OpenSSL message digest implementation fetched once for the process.
/// @unchecked Sendable: an EVP_MD is immutable once fetched, and OpenSSL allows
/// one to be used from many threads at once.
struct FetchedDigest: @unchecked Sendable {
    let pointer: OpaquePointer

    static let sha256: FetchedDigest = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else {
            preconditionFailure("OpenSSL has no SHA-256 implementation (EVP_MD_fetch failed)")
        }
        return FetchedDigest(pointer: md)
    }()
}
